"""`-p --input-format stream-json`: user messages read from stdin, one JSON object a line, as the Agent SDK's
transport writes them; each is one turn of a single conversation, answered with stream-json lines."""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from agentteams import diagnostics
from agentteams.agent.permissions.policy import parse_mode
from agentteams.errors import AgentTeamsError
from agentteams.run import headless


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


def control_reply(obj: dict[str, Any], session: Any, interrupt: Any) -> dict[str, Any]:
    """The `control_response` to a `control_request`, as the real CLI answers the SDK's: `initialize` (the
    handshake, awaited before anything is sent), `interrupt` (the running turn stops), `set_model` and
    `set_permission_mode` (from the next request on) succeed; any other subtype is refused as unsupported, as the
    real CLI refuses one it does not know, so an SDK gets an error instead of waiting."""
    request: dict[str, Any] = obj["request"] if isinstance(obj.get("request"), dict) else {}
    subtype = request.get("subtype")
    reply: dict[str, Any] = {"request_id": obj.get("request_id")}
    body: dict[str, Any] = {}
    try:
        if subtype == "initialize":
            body = {"commands": [], "current_permission_mode": session.policy.mode, "output_style": "default",
                    "pid": os.getpid()}  # fmt: skip
        elif subtype == "interrupt":
            interrupt()
        elif subtype == "set_model":
            session.set_model(str(request.get("model") or session.options.model))
        elif subtype == "set_permission_mode":
            session.policy.mode = parse_mode(str(request.get("mode")))
        else:
            raise AgentTeamsError(f"Unsupported control request subtype: {subtype}")
    except AgentTeamsError as e:
        code = "unsupported_request" if str(e).startswith("Unsupported") else "invalid_request"
        return {"type": "control_response", "response": reply | {"subtype": "error", "error": str(e),
                                                                  "error_code": code}}  # fmt: skip
    return {"type": "control_response", "response": reply | {"subtype": "success", "response": body}}


class _Input:
    """Reads stdin on a thread of its own: control requests are answered as they come (an interrupt must reach a
    running turn), prompts wait in order for the conversation; a bad line is one warning and skipped."""

    def __init__(self, stream: Any, answer: Callable[[dict[str, Any]], None]) -> None:
        self._prompts: queue.Queue[str | None] = queue.Queue()
        self._stream, self._answer = stream, answer
        threading.Thread(target=self._read, name="stdin", daemon=True).start()

    def _read(self) -> None:
        try:
            for number, line in enumerate(self._stream, start=1):
                try:
                    obj = parse(line)
                except ValueError as e:
                    diagnostics.warning("stdin line %d is not JSON (%s): skipped", number, e)
                    continue
                if obj is not None and obj.get("type") == "control_request":
                    self._answer(obj)
                    continue
                text = user_text(obj) if obj is not None else None
                if text is not None and text.strip():
                    self._prompts.put(text)
        finally:
            self._prompts.put(None)  # end of input

    def __iter__(self) -> Iterator[str]:
        while (prompt := self._prompts.get()) is not None:
            yield prompt


def run(options: Any, output_format: str, *, teammate_mode: str = "auto", teammate_command: str | None = None) -> int:
    """One conversation over stdin's messages: init, the turn's messages and a result line per message; the exit
    code of the last turn (0 when stdin held no message, as nothing failed)."""
    from agentteams.agent.loop import AgentEvent
    from agentteams.model.aliases import resolve_model
    from agentteams.run.lead_setup import build_lead

    resolve_model(options.model)
    turns: list[Any] = []

    lines = headless.StreamLines(options)

    def on_event(event: AgentEvent) -> None:
        for line in lines(event):
            headless.emit(line)

    parts = build_lead(options, teammate_mode=teammate_mode, teammate_command=teammate_command,
                       on_event=on_event, on_turn_end=turns.append)  # fmt: skip
    runtime, code = parts.runtime, 0
    try:
        session = runtime.session
        for prompt in _Input(sys.stdin, lambda obj: headless.emit(control_reply(obj, session, runtime.interrupt))):
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
