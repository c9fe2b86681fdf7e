"""Interop tier, model aliases on every provider (issue 29, item 2): each pinned real Claude Code and ours, offline
against the scripted server standing in for Anthropic's API, Bedrock, Vertex, Foundry, Mantle and the Claude Platform
on AWS and on Google Cloud, send the same model id (and the same 1M-context beta, and Vertex region) for every alias,
`[1m]` form and `default`. Ours follows 2.1.332; what an older version sends differently is in ccversions.TRAITS
(`aliases`), so a new release's table change fails here.

One process per CLI and provider: started with `--model haiku[1m]` (which `/model` and `set_model` refuse), then each
other name through the SDK's `set_model` control request (what `/model` does), one prompt each."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.model.aliases import LONG_BETA
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.provider_env import PROVIDERS, provider_env
from tests.support.stream_json import STREAM_ARGS, read_until, sdk_user_line

pytestmark = [pytest.mark.timeout(300), pytest.mark.interop]
MARK = "ALIASPROBE"
FIRST = "haiku[1m]"  # given as --model: set_model takes only the picker's names
NAMES = ("sonnet", "opus", "haiku", "fable", "best", "opusplan", "default", "sonnet[1m]", "opus[1m]", "fable[1m]")
Sent = tuple[str, bool, str | None]  # the model id, whether the 1M-context beta was asked for, Vertex's region


def _newest_probe(messages: list[Any]) -> str:
    """The newest message holding a probe (a newer CLI may send more after it: a reminder, a tool change)."""
    return next((text for m in reversed(messages) if MARK in (text := json.dumps(m))), "")


def _sent(server: MockServer, name: str) -> Sent | None:
    """What the main request of `name`'s prompt carried; None when it made none (the CLI refused the name)."""
    prompt = re.compile(re.escape(f"{MARK} {name}") + r"(?![\w\[])")  # in the newest probe: the rest is resent
    mains = [r for r in server.requests if isinstance(r["body"], dict) and r["body"].get("tools")
             and prompt.search(_newest_probe(r["body"]["messages"]))]  # fmt: skip
    if not mains:
        return None
    last = mains[-1]
    cloud = last.get("cloud") or {}
    betas = [*last.get("headers", {}).get("anthropic-beta", "").split(","), *last["body"].get("anthropic_beta", [])]
    return str(cloud.get("model") or last["body"]["model"]), LONG_BETA in betas, cloud.get("region")


def table(argv: list[str], env: dict[str, str], cwd: Path, server: MockServer) -> dict[str, Sent | None]:
    """name -> what one CLI sent for it, in one stream-json process."""
    proc = subprocess.Popen([*argv, *STREAM_ARGS, "--model", FIRST], env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    found: dict[str, Sent | None] = {}
    try:
        for i, name in enumerate((FIRST, *NAMES)):
            if name != FIRST:
                request = {"subtype": "set_model", "model": name}
                proc.stdin.write(json.dumps({"type": "control_request", "request_id": f"m{i}", "request": request}))
                proc.stdin.write("\n")
                proc.stdin.flush()
                if read_until(proc.stdout, "control_response")["response"].get("subtype") != "success":
                    found[name] = None  # refused (2.1.330: `sonnet[1m]` where no 1M model backs it)
                    continue
            proc.stdin.write(sdk_user_line(f"{MARK} {name}"))
            proc.stdin.flush()
            read_until(proc.stdout, "result")  # an error result is fine: the request it made is what counts
            found[name] = _sent(server, name)
        proc.stdin.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        stderr = proc.stderr.read() if proc.stderr else ""
        if len(found) < len(NAMES) + 1:
            print(f"{argv[0]} stderr: {stderr[-2000:]}")
    return found


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_every_alias_sends_the_model_id_of_the_real_cli(
    cli: Cli, tmp_path: Path, servers: list[MockServer], provider: str
) -> None:
    cwd = tmp_path / "proj"
    cwd.mkdir()
    script = {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": 200}]}]}
    ours_server = MockServer(script).start()
    servers.append(ours_server)
    cleared = ("ANTHROPIC_", "AWS_", "CLAUDE_CODE_USE_", "CLAUDE_CODE_SKIP_", "CLOUD_ML_REGION", "VERTEX_REGION_")
    ours_env = {k: v for k, v in cli.env().items() if not k.startswith(cleared)}
    ours_env.update(provider_env(provider, ours_server))
    if provider == "firstParty":
        ours_env.update(ANTHROPIC_BASE_URL=ours_server.base_url, ANTHROPIC_API_KEY=rc.API_KEY)
    ours = table(cli.argv(), ours_env, cwd, ours_server)
    assert None not in ours.values(), ours
    failures = []
    for version in [v for v in rc.VERSIONS if provider not in ccv.TRAITS[v].unknown_providers]:
        real_server = MockServer(script).start()
        servers.append(real_server)
        config = tmp_path / f"config-{version}"
        rc.seed_home(config, [cwd], version)
        base = real_server.base_url if provider == "firstParty" else "http://127.0.0.1:9"
        env = rc.claude_env(config, base, extra=provider_env(provider, real_server))
        if provider != "firstParty":
            env.pop("ANTHROPIC_API_KEY")
        real = table([str(rc.claude_bin(version))], env, cwd, real_server)
        changed = ccv.TRAITS[version].aliases.get(provider, {})
        expected = {name: changed.get(name, sent) for name, sent in ours.items()}
        print(f"claude {version} on {provider}: {json.dumps(real)}")
        if real != expected:
            diff = {n: {"real": real.get(n), "expected": expected[n]} for n in expected if real.get(n) != expected[n]}
            failures.append(f"claude {version} on {provider}: {json.dumps(diff)}")
    assert not failures, "\n".join(failures)
