"""Claude Code's stream-json lines around a foreground subagent (the Task/Agent tool without a team): `task_started`
and its prompt as an attributed user line, its tool calls (and its text, when the program asked for it) attributed to
the call, then `task_updated` and `task_notification` with its answer written to an output file."""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentteams.agent.subagent_run import is_subagent_call, new_agent_id
from agentteams.run.task_output import write_task_output

Line = dict[str, Any]


@dataclass
class _Running:
    tool_use_id: str
    task_id: str
    run_id: str
    kind: str
    description: str
    started: float = field(default_factory=time.monotonic)
    tool_uses: int = 0
    tokens: int = 0


class SubagentLines:
    """Turns the lead's Task/Agent calls and its subagents' events into Claude Code's lines. The calls of one answer
    may run side by side, each in a thread of its own: its start, its subagent's answers and its end come from that
    thread, which is how a subagent's events find their call."""

    def __init__(self, session_id: Callable[[], str]) -> None:
        self._session_id = session_id
        self.forward_text = False  # the program's `forwardSubagentText` (initialize)
        self._running: dict[int, _Running] = {}  # by the thread that runs the call

    def main_event(self, event: Any) -> list[Line]:
        """Lines for the lead's own events: a subagent's start and end."""
        if event.kind == "tool_start" and is_subagent_call(event.tool, event.input or {}):
            return self._started(event)
        running = self._running.get(threading.get_ident())
        if event.kind == "tool_end" and running is not None and event.tool_use_id == running.tool_use_id:
            return self._ended(event)
        return []

    def sub_event(self, event: Any, line: Callable[..., Line]) -> list[Line]:
        """Lines for a subagent's own event: its tool calls and results (its text too when forwarded), attributed."""
        running = self._running.get(threading.get_ident())
        if running is None or event.message is None or event.kind not in ("assistant", "tool_results"):
            return []
        if event.kind == "assistant" and event.usage is not None:
            u = event.usage
            running.tokens = (
                u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens + u.output_tokens
            )
        blocks = [b for b in event.message.get("content") or [] if isinstance(b, dict)]
        if event.kind == "assistant":
            running.tool_uses += sum(1 for b in blocks if b.get("type") == "tool_use")
            shown = [
                b for b in blocks if b.get("type") == "tool_use" or (self.forward_text and b.get("type") == "text")
            ]
            from agentteams.agent.journal import answer_meta
            from agentteams.store.transcripts.writer import block_message

            meta = answer_meta(event, "")
            return [line("assistant", block_message(b, meta), parent_tool_use_id=running.tool_use_id)
                    for b in shown]  # fmt: skip
        return [line("user", {"role": "user", "content": [b]}, parent_tool_use_id=running.tool_use_id) for b in blocks]

    def _started(self, event: Any) -> list[Line]:
        args = event.input or {}
        kind, description = str(args.get("subagent_type") or "general-purpose"), str(args.get("description") or "")
        # the id its transcript file has too (the session made it: agent/subagent_run.py)
        task_id = event.agent_id or new_agent_id()
        running = _Running(event.tool_use_id, task_id, _run_id(), kind, description)
        self._running[threading.get_ident()] = running
        prompt = str(args.get("prompt") or "")
        started = {"type": "system", "subtype": "task_started", "task_id": running.task_id, "run_id": running.run_id,
                   "tool_use_id": running.tool_use_id, "description": description, "subagent_type": kind,
                   "is_backgrounded": False, "spawn_depth": 1, "task_type": "local_agent", "prompt": prompt,
                   **self._stamp()}  # fmt: skip
        asked = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
                 "parent_tool_use_id": running.tool_use_id, "agent_id": running.task_id,
                 "session_id": self._session_id(), "uuid": str(uuid.uuid4()), "timestamp": _now(),
                 "subagent_type": kind, "task_description": description}  # fmt: skip
        return [started, asked]

    def _ended(self, event: Any) -> list[Line]:
        running = self._running.pop(threading.get_ident())
        failed = event.result is None or event.result.is_error
        status = "failed" if failed else "completed"
        answer = "" if event.result is None else event.result.content
        output = write_task_output(self._session_id(), running.task_id, answer)
        updated = {"type": "system", "subtype": "task_updated", "task_id": running.task_id, "run_id": running.run_id,
                   "patch": {"status": status, "end_time": int(time.time() * 1000)}, **self._stamp()}  # fmt: skip
        usage = {"total_tokens": running.tokens, "tool_uses": running.tool_uses,
                 "duration_ms": int((time.monotonic() - running.started) * 1000)}  # fmt: skip
        notified = {"type": "system", "subtype": "task_notification", "task_id": running.task_id,
                    "run_id": running.run_id, "tool_use_id": running.tool_use_id, "status": status,
                    "output_file": str(output), "summary": answer, "usage": usage, **self._stamp()}  # fmt: skip
        return [updated, notified]

    def _stamp(self) -> dict[str, str]:
        return {"uuid": str(uuid.uuid4()), "session_id": self._session_id()}


def _run_id() -> str:
    return f"{int(time.time() * 1000):x}-{secrets.token_hex(4)}"


def _now() -> str:
    from agentteams.store.fs.atomic_json import now_iso

    return now_iso()
