"""Writes that may fail without stopping the agent (its transcript, its presence record, marking its inbox read,
the lead's team bookkeeping): each kind warns once when it starts failing, naming the path, and the run's last
line can say what was not saved."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Literal

from agentteams import diagnostics

WriteKind = Literal["transcript", "presence", "inbox", "team files"]


@dataclass(frozen=True)
class WriteFailure:
    kind: WriteKind
    target: str  # the file that was to be written
    path: str  # where the write failed: the file, or a directory it needed
    reason: str  # the OS's words: "No space left on device", "Read-only file system"

    def line(self) -> str:
        where = "" if self.path == self.target else f" ({self.path})"
        return f"{self.kind} {self.target} not saved: {self.reason}{where}"


_lock = threading.Lock()
_failing: dict[WriteKind, WriteFailure] = {}  # what fails now, by kind
_failed: dict[WriteKind, WriteFailure] = {}  # the first failure of each kind in this process
_warned_at = -1  # the warning count just after our last warning


def os_reason(error: Exception) -> str:
    """The error's words without its path: `No space left on device` (or a lock timeout's own line)."""
    if isinstance(error, OSError):
        return os.strerror(error.errno) if error.errno else str(error)
    return str(error)


def failed(kind: WriteKind, path: object, error: Exception, *, held: bool = False) -> None:
    """A write of `kind` to `path` failed: one warning while it keeps failing, then quiet until it works again.
    `held`: the writer keeps it and writes it again once the disk takes it."""
    global _warned_at
    where = getattr(error, "filename", None) or path
    found = WriteFailure(kind, str(path), str(where), os_reason(error))
    with _lock:
        first = kind not in _failing
        _failing[kind] = found
        _failed.setdefault(kind, found)
    if first:
        then = "kept, to be written once the disk takes it" if held else "going on without it"
        diagnostics.warning("%s; %s", found.line(), then)
        _warned_at = diagnostics.warning_count()
    else:
        diagnostics.debug("%s (again)", found.line())


def succeeded(kind: WriteKind) -> None:
    """A write of `kind` worked: the next failure warns again."""
    if kind in _failing:
        with _lock:
            _failing.pop(kind, None)


def summary() -> str | None:
    """One line naming every kind of write that failed in this process (its first failure), or None."""
    with _lock:
        found = list(_failed.values())
    return "; ".join(f.line() for f in found) if found else None


def summary_unless_last() -> str | None:
    """`summary()`, unless our own warning was the last line written anyway: what a run prints as it ends."""
    return None if _warned_at == diagnostics.warning_count() else summary()


def reset() -> None:
    """Forget past failures (tests; a REPL's new session)."""
    with _lock:
        _failing.clear()
        _failed.clear()
