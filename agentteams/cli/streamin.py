"""`-p --input-format stream-json`: user messages read from stdin, one JSON object a line, as the Agent SDK's
transport writes them; each is one turn of a single conversation, answered with stream-json lines."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from typing import Any

from agentteams import diagnostics
from agentteams.cli import headless
from agentteams.errors import AgentTeamsError


def user_text(line: str) -> str | None:
    """The prompt of one stdin line: a `user` message's text (string content, or its text blocks joined);
    None for a blank line or any other kind of message (control requests are not taken yet)."""
    obj = json.loads(line) if line.strip() else None
    if not isinstance(obj, dict) or obj.get("type") != "user":
        return None
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n\n".join(t for t in texts if t)
    return None


def _prompts(stream: Any) -> Iterator[str]:
    """The user prompts on `stream`, in order, until it closes; a bad line is reported in one line and skipped."""
    for number, line in enumerate(stream, start=1):
        try:
            text = user_text(line)
        except ValueError as e:
            diagnostics.warning("stdin line %d is not JSON (%s): skipped", number, e)
            continue
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

    parts = build_lead(options, teammate_mode=teammate_mode, teammate_command=teammate_command,
                       on_event=on_event, on_turn_end=turns.append)  # fmt: skip
    runtime, code = parts.runtime, 0
    try:
        for prompt in _prompts(sys.stdin):
            headless.emit(headless.init_line(runtime.session, options))
            start, before = time.monotonic(), len(turns)
            runtime.submit(*headless.custom_command(prompt, options.cwd))
            headless.wait_settled(runtime)
            done = [r for r in turns[before:] if r is not None]
            if not done:
                raise runtime.last_error or AgentTeamsError("the run ended before the model answered")
            code = headless.report(done, runtime.session, options.session_id, output_format, time.monotonic() - start)
    finally:
        parts.close(team_down=True)
    return code
