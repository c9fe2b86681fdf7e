"""`-p --input-format stream-json`: user messages read from stdin, one JSON object a line, as the Agent SDK's
transport writes them; each is one turn of a single conversation, answered with stream-json lines."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

from agentteams import diagnostics
from agentteams.cli import headless
from agentteams.errors import AgentTeamsError


def parse(line: str) -> dict[str, Any] | None:
    """One stdin line as a JSON object (None for a blank line); ValueError when it is not one."""
    obj = json.loads(line) if line.strip() else None
    if obj is not None and not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    return obj


def user_text(obj: dict[str, Any]) -> str | None:
    """A `user` message's prompt: string content, or its text blocks joined (None for another kind)."""
    message = obj.get("message") if obj.get("type") == "user" else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n\n".join(t for t in texts if t)
    return None


def control_reply(obj: dict[str, Any], permission_mode: str) -> dict[str, Any]:
    """The `control_response` to a `control_request`: `initialize` (the SDK's handshake, awaited before it sends
    anything) succeeds; any other subtype (interrupt, permission callbacks, ...) is refused as unsupported, as the
    real CLI refuses a subtype it does not know, so an SDK gets an error instead of waiting."""
    request = obj.get("request")
    subtype = request.get("subtype") if isinstance(request, dict) else None
    reply: dict[str, Any] = {"request_id": obj.get("request_id")}
    if subtype == "initialize":
        body = {
            "commands": [],
            "current_permission_mode": permission_mode,
            "output_style": "default",
            "pid": os.getpid(),
        }
        reply |= {"subtype": "success", "response": body}
    else:
        reply |= {"subtype": "error", "error": f"Unsupported control request subtype: {subtype}",
                  "error_code": "unsupported_request"}  # fmt: skip
    return {"type": "control_response", "response": reply}


def _prompts(stream: Any, permission_mode: str) -> Iterator[str]:
    """The user prompts on `stream`, in order, until it closes; control requests are answered on the way, and a
    bad line is reported in one line and skipped."""
    for number, line in enumerate(stream, start=1):
        try:
            obj = parse(line)
        except ValueError as e:
            diagnostics.warning("stdin line %d is not JSON (%s): skipped", number, e)
            continue
        if obj is not None and obj.get("type") == "control_request":
            headless.emit(control_reply(obj, permission_mode))
            continue
        text = user_text(obj) if obj is not None else None
        if text is not None and text.strip():
            yield text


def run(options: Any, output_format: str, *, teammate_mode: str = "auto", teammate_command: str | None = None) -> int:
    """One conversation over stdin's messages: init, the turn's messages and a result line per message; the exit
    code of the last turn (0 when stdin held no message, as nothing failed)."""
    from agentteams.agent.loop import AgentEvent
    from agentteams.cli.lead_setup import build_lead
    from agentteams.model.aliases import resolve_model

    resolve_model(options.model)
    turns: list[Any] = []

    def on_event(event: AgentEvent) -> None:
        if event.kind in ("assistant", "tool_results") and event.message is not None:
            kind = "assistant" if event.kind == "assistant" else "user"
            headless.emit(headless.message_line(kind, event.message, options.session_id))
        elif event.kind == "compacted":
            headless.emit(headless.boundary_line(event, options.session_id))

    parts = build_lead(options, teammate_mode=teammate_mode, teammate_command=teammate_command,
                       on_event=on_event, on_turn_end=turns.append)  # fmt: skip
    runtime, code = parts.runtime, 0
    try:
        for prompt in _prompts(sys.stdin, runtime.session.policy.mode):
            headless.emit(headless.init_line(runtime.session, options))
            start, before = time.monotonic(), len(turns)
            compact = headless.compact_instructions(prompt)
            if compact is not None:  # between turns, as in -p: nothing is sent but the summary request
                code = headless.compacted(runtime.session, compact, options.session_id, output_format, start)
                continue
            runtime.submit(*headless.custom_command(prompt, options.cwd))
            headless.wait_settled(runtime)
            done = [r for r in turns[before:] if r is not None]
            if not done:
                raise runtime.last_error or AgentTeamsError("the run ended before the model answered")
            code = headless.report(done, runtime.session, options.session_id, output_format, time.monotonic() - start)
    finally:
        parts.close(team_down=True)
    return code
