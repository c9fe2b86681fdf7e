"""The warnings sink: where stores and runtimes report problems they recovered from (a file moved aside, a torn line).

By default the `agentteams` logger, imported on first use; the CLI installs a sink that writes one line.
"""

from __future__ import annotations

from collections.abc import Callable

Sink = Callable[[str, str], None]  # (level, message)
_sink: Sink | None = None
_warnings = 0  # warnings emitted so far (whether a later line followed one)


def set_sink(sink: Sink | None) -> None:
    global _sink
    _sink = sink


def _emit(level: str, message: str, args: tuple[object, ...]) -> None:
    if _sink is not None:
        if level != "debug":
            _sink(level, message % args if args else message)
        return
    import logging

    getattr(logging.getLogger("agentteams"), level)(message, *args)


def warning(message: str, *args: object) -> None:
    global _warnings
    _warnings += 1
    _emit("warning", message, args)


def warning_count() -> int:
    return _warnings


def debug(message: str, *args: object) -> None:
    _emit("debug", message, args)
