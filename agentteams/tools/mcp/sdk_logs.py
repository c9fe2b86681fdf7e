"""The `mcp` SDK's own log records, kept off the terminal: it logs every line a server writes to its stdout that is
not JSON-RPC with a traceback, so a server printing garbage cost a screen of stderr. Each server costs one warning
line at most (naming it and its first bad line); the rest goes to the debug log, without tracebacks."""

from __future__ import annotations

import contextvars
import logging
import threading

from agentteams import diagnostics
from agentteams.inert_text import inert

# the server whose connection the record came from: set in its connection's task, which the SDK's reader tasks copy
serving: contextvars.ContextVar[str] = contextvars.ContextVar("mcp_serving", default="")

_BAD_LINE = "Failed to parse JSONRPC message from server"
_lock = threading.Lock()
_installed = False


class _ToDiagnostics(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self._said: set[tuple[str, str]] = set()  # (server, kind) already warned of

    def emit(self, record: logging.LogRecord) -> None:
        name = serving.get()
        message = record.getMessage()
        if record.levelno < logging.WARNING:
            diagnostics.debug("mcp: %s", message)
            return
        kind = "bad line" if message == _BAD_LINE else record.msg if isinstance(record.msg, str) else message
        with _lock:
            first = (name, kind) not in self._said
            self._said.add((name, kind))
        if not first:
            diagnostics.debug("MCP server %r: %s (again)", name, message)
        elif kind == "bad line":
            line = _bad_input(record)
            diagnostics.warning("MCP server %r writes lines that are not JSON-RPC to its stdout; they are ignored "
                                "(the first: %s)", name, inert(line[:120]))  # fmt: skip
        else:
            diagnostics.warning("MCP server %r: %s", name or "?", inert(" ".join(message.split())[:200]))


def _bad_input(record: logging.LogRecord) -> str:
    """The line the server wrote, from the validation error the SDK logged (pydantic keeps the input)."""
    error = record.exc_info[1] if record.exc_info else None
    errors = getattr(error, "errors", None)
    try:
        found = errors()[0].get("input") if callable(errors) else None
    except (IndexError, TypeError, AttributeError):
        found = None
    return str(found) if found is not None else "?"


def install() -> None:
    """Take the `mcp` logger's records (once per process): none reaches stderr through logging's last resort."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    logger = logging.getLogger("mcp")
    logger.addHandler(_ToDiagnostics())
    logger.propagate = False
    logger.setLevel(logging.DEBUG if diagnostics.debugging() else logging.WARNING)
