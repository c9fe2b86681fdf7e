"""Whether a process still runs, by pid, and the team lead's process record (`leadProcess`, Claude Code 2.1.330).

Stdlib only, and no costly imports (no dataclasses, no typing): the teammate launcher imports this module too.
"""

from __future__ import annotations

import math
import os
import socket
import time

CLAIM_GRACE_MS = 2000  # a recorded lead without procStart is gone when its pid's process started later than this
MAX_SAFE_INTEGER = 2**53 - 1  # JavaScript's Number.isSafeInteger bound, which 2.1.330 checks `pid` against


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of `/proc/<pid>/stat` after the command name (index 0 is field 3, the state); None if unreadable.

    The command name is in parentheses and may itself contain ") ", so the split is after the last ")".
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat.rpartition(b")")[2].split()


def pid_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, not yet reaped) counts as dead: it will never act again."""
    if pid <= 0:  # kill(0) and kill(-n) signal whole process groups: never a single agent's pid
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    fields = _stat_fields(pid)
    if fields is None:
        return True  # no /proc: trust kill(0)
    return fields[:1] != [b"Z"]


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, nearest first (from /proc's per-thread `children` lists); empty without /proc."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop(0)
        try:
            threads = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for tid in threads:
            try:
                with open(f"/proc/{parent}/task/{tid}/children", "rb") as f:
                    children = [int(c) for c in f.read().split()]
            except (OSError, ValueError):
                continue
            fresh = [c for c in children if c not in found and c != pid]
            found += fresh
            todo += fresh
    return found


def proc_start(pid: int) -> str | None:
    """Field 22 of `/proc/<pid>/stat` (start time in clock ticks since boot), as 2.1.330 records it: a string.

    None without /proc (not Linux) or when the process is gone.
    """
    fields = _stat_fields(pid)
    if fields is None or len(fields) < 20:
        return None
    return fields[19].decode("ascii", "replace")


def pid_space() -> str:
    """`<hostname>#<readlink /proc/self/ns/pid>`, 2.1.330's PID namespace identity; the hostname alone without one.

    2.1.330 takes node's `os.hostname()`, which is gethostname(2), as `socket.gethostname()` is.
    """
    host = socket.gethostname()
    try:
        return f"{host}#{os.readlink('/proc/self/ns/pid')}"
    except OSError:
        return host


def _started_at_ms(start_ticks: str) -> float | None:
    """Epoch ms at which a process with this start token started; None when it cannot be told."""
    try:
        ticks = int(start_ticks)
        hz = os.sysconf("SC_CLK_TCK")
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)  # the clock /proc's starttime counts on
    except (ValueError, OSError, AttributeError):
        return None
    return (time.time() - since_boot + ticks / hz) * 1000


class LeadProcess:
    """`leadProcess` in a team config: which process leads the team (`pid`, `pidSpace`, `claimedAt`, `procStart?`).

    Immutable. Claude Code 2.1.330 writes it at team creation and on a takeover, and adopts an orphaned team only
    when the recorded lead is gone in its own PID namespace.
    """

    __slots__ = ("claimed_at", "pid", "pid_space", "proc_start")
    KEYS = ("pid", "pidSpace", "claimedAt", "procStart")  # 2.1.330's key order

    pid: int
    pid_space: str
    claimed_at: int | float
    proc_start: str | None

    def __init__(self, pid: int, pid_space: str, claimed_at: int | float, proc_start: str | None = None) -> None:
        for name, value in (("pid", pid), ("pid_space", pid_space), ("claimed_at", claimed_at)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "proc_start", proc_start)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"LeadProcess is immutable (tried to set {name})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LeadProcess) and self._tuple() == other._tuple()

    def __hash__(self) -> int:
        return hash(self._tuple())

    def __repr__(self) -> str:
        return f"LeadProcess({self.to_json()!r})"

    def _tuple(self) -> tuple[int, str, int | float, str | None]:
        return (self.pid, self.pid_space, self.claimed_at, self.proc_start)

    @classmethod
    def for_this_process(cls, claimed_at_ms: int) -> LeadProcess:
        """The record a lead writes for itself, claiming the team at `claimed_at_ms` (epoch ms)."""
        pid = os.getpid()
        return cls(pid, pid_space(), claimed_at_ms, proc_start(pid))

    @classmethod
    def from_json(cls, obj: object) -> LeadProcess | None:
        """The record in `obj`, or None when 2.1.330 would drop it: `{pid: safe integer, pidSpace: string,
        claimedAt: finite number, procStart?: string}`; other keys are allowed."""
        if not isinstance(obj, dict):
            return None
        pid, space, claimed, start = (obj.get(k) for k in cls.KEYS)
        if isinstance(pid, float) and pid.is_integer():
            pid = int(pid)  # JSON has one number type: 25734.0 is a safe integer to JavaScript
        if type(pid) is not int or abs(pid) > MAX_SAFE_INTEGER or not isinstance(space, str):
            return None
        if not isinstance(claimed, (int, float)) or isinstance(claimed, bool) or not math.isfinite(claimed):
            return None
        if "procStart" in obj and not isinstance(start, str):
            return None
        return cls(pid, space, claimed, start)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"pid": self.pid, "pidSpace": self.pid_space, "claimedAt": self.claimed_at}
        if self.proc_start is not None:
            out["procStart"] = self.proc_start
        return out

    def is_gone(self) -> bool | None:
        """Whether the recorded lead has exited, as 2.1.330 decides before taking a team over.

        None when it cannot be told: the record is from another PID namespace (or machine), or its pid is not
        a single process's. Gone: no such process, a zombie, a different process at that pid (its start token
        differs; without a recorded token, it started more than 2 s after the claim).
        """
        if self.pid <= 0 or self.pid_space != pid_space():
            return None
        if not pid_alive(self.pid):
            return True
        start = proc_start(self.pid)
        if start is None:  # no /proc (not Linux), or it exited just now: the next look will tell
            return False
        if self.proc_start is not None:
            return start != self.proc_start
        started = _started_at_ms(start)
        return started is not None and started > self.claimed_at + CLAIM_GRACE_MS
