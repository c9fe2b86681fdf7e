"""The warnings sink: where stores and runtimes report problems they recovered from (a file moved aside, a torn line).

By default the `agentteams` logger, imported on first use; the CLI installs a sink that writes one line.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

Sink = Callable[[str, str], None]  # (level, message)
_sink: Sink | None = None
_warnings = 0  # warnings emitted so far (whether a later line followed one)
_debug: Callable[[str], None] | None = None  # -d/--debug: where debug lines go (run/debug_log.py)


def set_sink(sink: Sink | None) -> None:
    global _sink
    _sink = sink


def set_debug(writer: Callable[[str], None] | None) -> None:
    global _debug
    _debug = writer


def debugging() -> bool:
    """Whether debug lines are kept (a caller may skip building an expensive one)."""
    return _debug is not None


def _emit(level: str, message: str, args: tuple[object, ...]) -> None:
    if _debug is not None:  # the debug log takes every line, warnings too, as claude's does
        _debug(message % args if args else message)
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


ENV_STAMPS = "AGENTTEAMS_STAMPS"  # a file: where `stamp` appends (benchmarks only; unset, a stamp costs a lookup)
_stamps: tuple[int, str, int] = (0, "", -1)  # this process's (pid, stamp file, its open fd)


def stamp(what: str) -> None:
    """Mark a point of a hot path (a message's delivery): `<epoch s> <pid> <what>` appended to $AGENTTEAMS_STAMPS, so
    a benchmark can say where the time went across processes. Off (a lookup) when it is unset."""
    global _stamps
    path = os.environ.get(ENV_STAMPS, "")
    if not path:
        return
    pid = os.getpid()
    if _stamps[:2] != (pid, path):  # a forked child, or another file: opened anew
        _stamps = (pid, path, os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600))
    os.write(_stamps[2], f"{time.time():.6f} {pid} {what}\n".encode())
