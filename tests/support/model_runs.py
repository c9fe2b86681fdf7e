"""Driving one stream-json session of the real claude and one of ours alike through model and mode changes (each a
control request followed by a prompt), each against its own scripted server on one provider: what the interop tests
of model choice compare."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.procs import stdin_session
from tests.support.provider_env import provider_env
from tests.support.stream_json import STREAM_ARGS, read_until, sdk_user_line

MARK = "MODELPROBE"
SCRIPT = {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}], "repeat": 200}]}]}
Step = tuple[str, str]  # ("mode" | "model", value): a control request, each followed by a prompt


def _model_of(server: MockServer, n: int) -> str | None:
    """The model id the main request of prompt n was sent to (the provider's id where it has its own)."""

    def newest(body: dict[str, Any]) -> int:  # claude may send a reminder after the prompt: the highest probe
        return max((int(k) for k in re.findall(rf"{MARK} (\d+)", json.dumps(body["messages"]))), default=-1)

    mains = [r for r in server.requests if isinstance(r["body"], dict) and r["body"].get("tools")
             and newest(r["body"]) == n]  # fmt: skip
    return str((mains[-1].get("cloud") or {}).get("model") or mains[-1]["body"]["model"]) if mains else None


def drive(argv: list[str], env: dict[str, str], cwd: Path, server: MockServer, model: str,
          steps: list[Step], replies: bool = False) -> list[tuple[str, Any]]:  # fmt: skip
    """Each step's control reply (its subtype, error code and the model an error names; with `replies`, the model a
    success names and what the session replayed as said) and the model its prompt then went to."""
    proc = subprocess.Popen([*argv, *STREAM_ARGS, "--model", model], env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    seen: list[tuple[str, Any]] = []
    with stdin_session(proc):
        for n, (kind, value) in enumerate(steps):
            request = {"subtype": "set_permission_mode", "mode": value} if kind == "mode" else {
                "subtype": "set_model", "model": value}  # fmt: skip
            proc.stdin.write(json.dumps({"type": "control_request", "request_id": f"r{n}", "request": request}) + "\n")
            proc.stdin.flush()
            replays: list[str] = []
            reply = read_until(proc.stdout, "control_response", replays)["response"]
            proc.stdin.write(sdk_user_line(f"{MARK} {n}"))
            proc.stdin.flush()
            read_until(proc.stdout, "result", replays)
            said: tuple[Any, ...] = (
                reply["subtype"],
                reply.get("error_code"),
                reply.get("model"),
                str(reply.get("error", "")).split(":")[0],
            )
            if replies:
                said = (*said, (reply.get("response") or {}).get("model"), replays)
            seen.append((f"{kind} {value}", (said, _model_of(server, n))))
    return seen


def both(cli: Cli, tmp_path: Path, servers: list[MockServer], provider: str, model: str,
         steps: list[Step], replies: bool = False) -> dict[str, list[tuple[str, Any]]]:  # fmt: skip
    """`drive` run once with the real claude, once with ours, alike: {"claude": its steps, "ours": ours}."""
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
        found[which] = drive(argv, env, cwd, server, model, steps, replies)
    return found
