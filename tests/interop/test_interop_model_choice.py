"""Interop tier, which model a session sends (issue 29, item 2's leftovers): claude 2.1.332 and ours, each a
stream-json session against its own scripted server, driven alike: `opusplan` sends opus's model in plan mode and
sonnet's otherwise as the mode changes; `set_model haiku[1m]` is refused (same code, the model in use kept and
named); retired first-party ids are sent as the opus alias's model where first-party ids are sent, provider by
provider."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import IO, Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.provider_env import provider_env
from tests.support.stream_json import STREAM_ARGS, sdk_user_line

pytestmark = [pytest.mark.timeout(300), pytest.mark.interop]
MARK = "MODELPROBE"
SCRIPT = {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": 200}]}]}
Step = tuple[str, str]  # ("mode" | "model", value): a control request, each followed by a prompt
RETIRED = ("claude-opus-4-1", "claude-opus-4-0", "claude-opus-4-20250514", "claude-opus-4-1-20250805",
           "claude-opus-4-1[1m]", "CLAUDE-OPUS-4-1")  # fmt: skip
# on a cloud provider claude also sends an undated name of a dated model (claude-opus-4, claude-opus-4-1,
# claude-haiku-4-5) as given where ours maps it to the provider's id of that model: not compared there yet


def _read_until(out: IO[str], kind: str) -> dict[str, Any]:
    while True:
        line = out.readline()
        assert line, f"stdout closed before a {kind}"
        found: dict[str, Any] = json.loads(line)
        if found.get("type") == kind:
            return found


def _model_of(server: MockServer, n: int) -> str | None:
    """The model id the main request of prompt n was sent to (the provider's id where it has its own)."""

    def newest(body: dict[str, Any]) -> int:  # claude may send a reminder after the prompt: the highest probe
        return max((int(k) for k in re.findall(rf"{MARK} (\d+)", json.dumps(body["messages"]))), default=-1)

    mains = [r for r in server.requests if isinstance(r["body"], dict) and r["body"].get("tools")
             and newest(r["body"]) == n]  # fmt: skip
    return str((mains[-1].get("cloud") or {}).get("model") or mains[-1]["body"]["model"]) if mains else None


def drive(argv: list[str], env: dict[str, str], cwd: Path, server: MockServer, model: str,
          steps: list[Step]) -> list[tuple[str, Any]]:  # fmt: skip
    """Each step's control reply (its subtype, error code and the model an error names) and the model its prompt
    then went to."""
    proc = subprocess.Popen([*argv, *STREAM_ARGS, "--model", model], env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    seen: list[tuple[str, Any]] = []
    try:
        for n, (kind, value) in enumerate(steps):
            request = {"subtype": "set_permission_mode", "mode": value} if kind == "mode" else {
                "subtype": "set_model", "model": value}  # fmt: skip
            proc.stdin.write(json.dumps({"type": "control_request", "request_id": f"r{n}", "request": request}) + "\n")
            proc.stdin.flush()
            reply = _read_until(proc.stdout, "control_response")["response"]
            proc.stdin.write(sdk_user_line(f"{MARK} {n}"))
            proc.stdin.flush()
            _read_until(proc.stdout, "result")
            said = (
                reply["subtype"],
                reply.get("error_code"),
                reply.get("model"),
                str(reply.get("error", "")).split(":")[0],
            )
            seen.append((f"{kind} {value}", (said, _model_of(server, n))))
        proc.stdin.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return seen


def both(cli: Cli, tmp_path: Path, servers: list[MockServer], provider: str, model: str,
         steps: list[Step]) -> dict[str, list[tuple[str, Any]]]:  # fmt: skip
    cwd = tmp_path / "proj"
    cwd.mkdir(exist_ok=True)
    found = {}
    for which in ("claude", "ours"):
        server = MockServer(SCRIPT).start()
        servers.append(server)
        own = provider_env(provider, server)
        if which == "claude":
            config = tmp_path / "real-config"
            rc.seed_home(config, [cwd], rc.NEWEST)
            env = rc.claude_env(config, server.base_url if provider == "firstParty" else "http://127.0.0.1:9",
                                extra=own)  # fmt: skip
            if provider != "firstParty":
                env.pop("ANTHROPIC_API_KEY")
            argv = [str(rc.claude_bin(rc.NEWEST))]
        else:
            cleared = ("ANTHROPIC_", "AWS_", "CLAUDE_CODE_USE_", "CLAUDE_CODE_SKIP_", "CLOUD_ML_REGION")
            env = {k: v for k, v in cli.env().items() if not k.startswith(cleared)} | own
            if provider == "firstParty":
                env |= {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": rc.API_KEY}
            argv = cli.argv()
        found[which] = drive(argv, env, cwd, server, model, steps)
    return found


@ccv.only(rc.NEWEST)
def test_opusplan_follows_the_permission_mode(claude_version: str, cli: Cli, tmp_path: Path,
                                             servers: list[MockServer]) -> None:  # fmt: skip
    steps = [("mode", "default"), ("mode", "plan"), ("mode", "default"), ("mode", "plan"), ("mode", "acceptEdits"),
             ("model", "sonnet"), ("mode", "plan"), ("model", "opusplan")]  # fmt: skip
    found = both(cli, tmp_path, servers, "firstParty", "opusplan", steps)
    assert found["ours"] == found["claude"]
    models = [sent for _step, (_said, sent) in found["ours"]]
    assert len(set(models)) == 2, models  # sonnet's and opus's


@ccv.only(rc.NEWEST)
def test_haiku_1m_is_refused_and_the_model_in_use_stays(claude_version: str, cli: Cli, tmp_path: Path,
                                                       servers: list[MockServer]) -> None:  # fmt: skip
    steps = [("model", "haiku[1m]"), ("model", "opus"), ("model", "HAIKU[1M]"), ("model", "claude-haiku-4-5[1m]")]
    found = both(cli, tmp_path, servers, "firstParty", "sonnet", steps)
    assert found["ours"] == found["claude"]
    assert found["ours"][0][1][0][:2] == ("error", "alias_1m_unsupported")


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("provider", ["firstParty", "anthropicAws", "anthropicGoogleCloud", "bedrock"])
def test_retired_ids_are_sent_as_claude_sends_them(claude_version: str, cli: Cli, tmp_path: Path,
                                                  servers: list[MockServer], provider: str) -> None:  # fmt: skip
    names = [n for n in RETIRED if "-20" in n] if provider == "bedrock" else [*RETIRED, "claude-opus-4"]
    if provider != "firstParty":
        names = [n for n in names if n != "claude-opus-4"]
    found = both(cli, tmp_path, servers, provider, names[0], [("model", m) for m in names])
    assert found["ours"] == found["claude"]
    remapped = {sent for step, (_said, sent) in found["ours"] if step != "model claude-opus-4"}
    assert (len(remapped) == 1) == (provider != "bedrock"), remapped  # all to opus's model, but on Bedrock
