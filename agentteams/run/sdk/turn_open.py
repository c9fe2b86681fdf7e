"""A driven turn's opening and its ends before the model: the init line held until the turn's first line (Claude Code
sends it once UserPromptSubmit hooks let the prompt through), and the results of a prompt a hook blocked or failed."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from agentteams.run import headless

CRASH_LINE = "[session_crash] the turn ended on a UserPromptSubmit hook's answer"  # the errors' second line


class Opener:
    """The turn's init line, held until the turn's first line goes out (or its result), or dropped when a hook ended
    the turn before it began."""

    def __init__(self) -> None:
        self._line: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def hold(self, line: dict[str, Any]) -> None:
        with self._lock:
            self._line = line

    def take(self) -> list[dict[str, Any]]:
        """The held line, if still held, to send now: the turn's thread and the main one may both ask; one gets it."""
        with self._lock:
            line, self._line = self._line, None
        return [line] if line is not None else []

    def flush(self) -> None:
        headless.emit_all(self.take())

    def drop(self) -> None:
        with self._lock:
            self._line = None


def _result(session: Any, session_id: str, seconds: float, **fields: Any) -> dict[str, Any]:
    total = session.ledger.total()
    return {"type": "result", **fields, "session_id": session_id, "num_turns": 0, "duration_ms": int(seconds * 1000),
            "duration_api_ms": total.api_ms, "total_cost_usd": round(total.cost_usd, 6), "usage": total.usage.to_json(),
            "modelUsage": headless.model_usage(session), "stop_reason": None, "permission_denials": [],
            "uuid": str(uuid.uuid4())}  # fmt: skip


def hook_failed(error: Exception, session: Any, session_id: str, seconds: float) -> dict[str, Any]:
    """A callback's UserPromptSubmit answer named another event: an error result and nothing before it."""
    return _result(session, session_id, seconds, subtype="error_during_execution", is_error=True,
                   errors=[str(error), CRASH_LINE])  # fmt: skip


def blocked(error: Exception, session: Any, session_id: str, seconds: float) -> dict[str, Any]:
    """A UserPromptSubmit hook blocked the prompt: the session goes on, the turn's result says why."""
    return _result(session, session_id, seconds, subtype="success", is_error=False, result=str(error))
