"""What the tests of messages between sessions share: a scripted server's routes for a receiving and a sending
session, a SendMessage call, and the requests that carry a message from another session."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.mockapi.reqtext import content_text
from tests.support.stream_json import sdk_user_line


def tool(name: str, **args: Any) -> dict[str, Any]:
    """A scripted turn calling one tool."""
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


def session_record(config_root: Path, name: str) -> dict[str, Any] | None:
    """The live sessions' record (`sessions/<pid>.json`) named `name`, if any."""
    for path in (config_root / "sessions").glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("name") == name:
            return data  # type: ignore[no-any-return]
    return None


def send(to: str, body: str) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": "SendMessage", "input": {"to": to, "message": body}}]}


def list_agents() -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": "ListAgents", "input": {}}]}


def routes(receiver: list[Any], sender: list[Any]) -> dict[str, Any]:
    """The sender's requests are those whose first prompt says SENDTO; every other one is the receiver's."""
    return {"routes": [
        {"name": "snd", "match": {"tools": True, "first_user": "SENDTO"}, "turns": sender, "idle": "snd idle."},
        {"name": "rcv", "match": {"tools": True}, "turns": receiver, "idle": "rcv idle."},
    ]}  # fmt: skip


def last_user(request: dict[str, Any]) -> str:
    return content_text(request["body"]["messages"][-1].get("content"))


def carrying(server: MockServer, marker: str) -> list[dict[str, Any]]:
    """The requests whose newest user message holds `marker` (a message from another session: in its wrapper)."""
    wrapped = "[Cross-session" in marker or "<cross-session-message" in marker
    return [r for r in server.requests if r["body"].get("tools") and marker in last_user(r)
            and (wrapped or "<cross-session-message" in last_user(r))]  # fmt: skip


def say(proc: subprocess.Popen[str], text: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write(sdk_user_line(text))
    proc.stdin.flush()
