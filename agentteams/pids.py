"""Whether a process still runs, by pid: stdlib only, so the teammate launcher can use it too."""

from __future__ import annotations

import os


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
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True  # no /proc: trust kill(0)
    # the state follows the command name, which is in parentheses and may itself contain ") "
    return stat.rpartition(b")")[2].split()[:1] != [b"Z"]
