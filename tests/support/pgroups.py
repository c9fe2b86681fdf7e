"""Processes a Bash tool call leaves behind, read from /proc: the running members of a process group, waiting for a
group to end, and the process (with its group) whose command line holds a marker."""

from __future__ import annotations

from pathlib import Path

from tests.support.wait import wait_until


def _stat_fields(stat: Path) -> list[str] | None:
    try:
        return stat.read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def live_members(pgid: int) -> list[int]:
    """Running processes of the group. A zombie has already exited; where PID 1 does not reap orphans
    (as in some containers) the killed grandchildren stay zombies, which is not ours to fix."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = _stat_fields(stat)
        if fields and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            pids.append(int(stat.parent.name))
    return pids


def wait_group_gone(pgid: int) -> None:
    """Wait (5 s at most) until no process of the group runs."""
    wait_until(lambda: not live_members(pgid), 5, f"group {pgid} to end", explain=lambda: f"left: {live_members(pgid)}")


def find_process(marker: str) -> tuple[int, int] | None:
    """(pid, process group) of a running process whose command line contains `marker`."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() not in cmdline.read_bytes():
                continue
        except OSError:
            continue
        fields = _stat_fields(cmdline.parent / "stat")
        if fields and fields[0] not in ("Z", "X"):
            return int(cmdline.parent.name), int(fields[2])
    return None
