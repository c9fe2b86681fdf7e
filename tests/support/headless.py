"""`agentteams -p` as a real process against the scripted server: its key, the scripts of tool calls it is given,
the run itself, and the tool results it sent back."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support.cli import Cli

KEY = "test-key-e2e-0123456789abcdef"


def tool(name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": args}


def turns(*blocks: dict[str, Any] | str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for b in blocks:
        out.append({"content": [{"type": "text", "text": b}]} if isinstance(b, str) else {"content": [b]})
    return out


def script(*blocks: dict[str, Any] | str) -> dict[str, Any]:
    return {"routes": [{"name": "main", "match": {"tools": True}, "turns": turns(*blocks)}]}


def overloaded(times: int) -> dict[str, Any]:
    error = {"type": "overloaded_error", "message": "Overloaded", "retry_after": 0}
    answer = {"content": [{"type": "text", "text": "FELL"}]}
    turns = [{"error": error, "repeat": times}, answer]
    return {"routes": [{"name": "main", "match": {"tools": True}, "turns": turns}]}


def notes_work(tmp_path: Path) -> Path:
    """The working directory of a headless run: `notes.txt` in draft, for the model to read and edit."""
    d = tmp_path / "work"
    d.mkdir()
    (d / "notes.txt").write_text("status: draft\n")
    return d


def serve(servers: list[MockServer], spec: dict[str, Any]) -> MockServer:
    server = MockServer(spec).start()
    servers.append(server)
    return server


def agentteams(
    cli: Cli, cwd: Path, *args: str, base_url: str | None, key: str | None = KEY, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = cli.env()
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    if key:
        env["ANTHROPIC_API_KEY"] = key
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    env["CLAUDE_CODE_MAX_RETRIES"] = "2"
    proc = cli(*args, env=env, cwd=cwd, timeout=120, input=stdin)
    assert KEY not in proc.stderr + proc.stdout
    return proc


def tool_results(server: MockServer) -> list[dict[str, Any]]:
    """Every tool_result block the agent sent back, in order."""
    out = []
    for req in server.requests:
        if req["path"].startswith("/v1/messages") and isinstance(req.get("body"), dict):
            last = req["body"]["messages"][-1]
            if isinstance(last["content"], list):
                out += [b for b in last["content"] if b.get("type") == "tool_result"]
    seen: dict[str, dict[str, Any]] = {b["tool_use_id"]: b for b in out}
    return list(seen.values())


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
