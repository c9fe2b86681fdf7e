"""Stream-json on a `-p` process's stdin and stdout, as the Agent SDK's subprocess transport speaks it: the flags,
a user message line, a control request, the initialize handshake, and reading one turn up to its result."""

from __future__ import annotations

import json
from typing import IO, Any

STREAM_ARGS = ("-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")


def sdk_user_line(text: str) -> str:
    """One stdin line as the SDK's transport writes a user message."""
    message = {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None,
               "session_id": "default"}  # fmt: skip
    return json.dumps(message) + "\n"


def read_turn(out: IO[str]) -> list[dict[str, Any]]:
    """The stream-json lines of one turn, up to and with its `result` (the SDK reads until a result too)."""
    lines: list[dict[str, Any]] = []
    while not lines or lines[-1]["type"] != "result":
        line = out.readline()
        assert line, f"stdout closed before a result: {lines}"
        lines.append(json.loads(line))
    return lines


def control_line(request_id: str, subtype: str) -> str:
    """A control request as the SDK writes one (its `initialize` handshake comes before any message)."""
    return json.dumps({"type": "control_request", "request_id": request_id, "request": {"subtype": subtype}}) + "\n"


def handshake(stdin: IO[str], stdout: IO[str]) -> None:
    """The SDK's initialize request and the reply it waits for; an unknown subtype gets an error reply."""
    stdin.write(control_line("req_1_init", "initialize") + control_line("req_2_odd", "no_such_request"))
    stdin.flush()
    replies = {r["response"]["request_id"]: r for r in (json.loads(stdout.readline()) for _ in range(2))}
    ok, refused = replies["req_1_init"], replies["req_2_odd"]  # matched by id, as the SDK matches them
    assert ok["type"] == refused["type"] == "control_response"
    assert (ok["response"]["subtype"], ok["response"]["request_id"]) == ("success", "req_1_init")
    assert (refused["response"]["subtype"], refused["response"]["request_id"]) == ("error", "req_2_odd")
    assert "no_such_request" in refused["response"]["error"]


def read_until(out: IO[str], kind: str, replays: list[str] | None = None) -> dict[str, Any]:
    """The next stream-json line of this type; the text of each replayed user message passed on the way goes to
    `replays`."""
    while True:
        line = out.readline()
        assert line, f"stdout closed before a {kind}"
        found: dict[str, Any] = json.loads(line)
        if found.get("type") == kind:
            return found
        if replays is not None and found.get("type") == "user" and found.get("isReplay"):
            replays.append(str(found["message"]["content"]))
