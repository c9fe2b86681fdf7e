"""A send that failed takes its message back: its spooled record is removed wherever it waits (spool, or the
in-flight batch of a committer that failed), so a send reported as failed is never delivered later."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Literal

from agentteams.errors import AgentTeamsError, NotSentError
from agentteams.store.file.inbox_file import in_flight_file, spool_file
from agentteams.store.fs import safe_paths
from agentteams.store.fs.locking import flock_exclusive, flock_release

# delivered: it is in the inbox after all; withdrawn: taken back; absent: it never got anywhere (or only torn);
# queued: a committer of another process holds it and will deliver it; stuck: it could not be taken back
Outcome = Literal["delivered", "withdrawn", "absent", "queued", "stuck"]


def withdraw(inbox: Path, mine: bytes, *, holding_lock: bool) -> Outcome:
    """Take back the record holding `mine` (an envelope's quoted msg_id) wherever it waits.

    Records move spool -> in-flight -> inbox, so they are looked for in that order: one that moves on while we look
    is found further on. Without the inbox lock an in-flight record belongs to a live committer: it stays queued.
    """
    try:
        if _drop_record(spool_file(inbox), mine, flock=True):
            return "withdrawn"
        in_flight = in_flight_file(inbox)
        if mine in (_read(in_flight) or b""):
            if not holding_lock:
                return "queued"
            if mine not in (_read(inbox) or b""):
                _drop_record(in_flight, mine, flock=False)
                return "withdrawn"
        return "delivered" if mine in (_read(inbox) or b"") else "absent"
    except OSError:
        return "stuck"


def failure(inbox: Path, error: BaseException, outcome: Outcome, msg_id: str | None) -> AgentTeamsError:
    """The one line a failed send reports: the inbox, what the disk (or lock) said, and the message's fate."""
    if isinstance(error, OSError):
        why = os.strerror(error.errno) if error.errno else str(error)
        where = f" ({error.filename})" if error.filename and str(error.filename) != str(inbox) else ""
        head = f"cannot write {inbox}: {why}{where}"
    else:
        head = f"{inbox}: {error}"
    fate = {
        "queued": f"queued: it will be delivered when the process writing that inbox finishes (msg_id {msg_id})",
        "stuck": f"it may still be delivered later (msg_id {msg_id}); check before sending it again",
    }.get(outcome, "the message was not sent")
    if outcome in ("withdrawn", "absent") and isinstance(error, OSError):  # nothing of it left anywhere
        return NotSentError(f"{head}; {fate}")
    return AgentTeamsError(f"{head}; {fate}")


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _drop_record(path: Path, mine: bytes, *, flock: bool) -> bool:
    """Blank the lines holding `mine` in the spool file at `path`, in place; True if there were any. Overwriting
    with spaces needs no room on a full disk and moves no other sender's bytes: a crash midway leaves our line torn
    (dropped as torn), never theirs. `flock`: senders may be appending (the spool itself)."""
    try:
        fd = safe_paths.open_fd(path, os.O_RDWR)  # never through a planted link
    except FileNotFoundError:
        return False
    with os.fdopen(fd, "r+b") as f:
        if flock:
            flock_exclusive(f)
        try:
            if flock and os.fstat(fd).st_ino != _inode(path):
                return False  # a committer took this spool while we waited: it is in flight now
            data = f.read()
            found = _lines_with(data, mine)
            for start, end in found:
                os.pwrite(fd, b" " * (end - start), start)
            if found:
                os.fsync(fd)
            others = any(line.strip() and mine not in line for line in data.split(b"\n"))
            if found and not flock and not others:
                os.unlink(path)  # an emptied in-flight batch: nothing for a committer to recover
            return bool(found)
        finally:
            if flock:
                flock_release(f)


def _lines_with(data: bytes, mine: bytes) -> list[tuple[int, int]]:
    """The (start, end) of each line of `data` holding `mine`, without its newline."""
    spans = []
    at = data.find(mine)
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end == -1 else end
        spans.append((start, end))
        at = data.find(mine, end)
    return spans


def _inode(path: Path) -> int | None:
    with contextlib.suppress(FileNotFoundError):
        return os.stat(path).st_ino
    return None
