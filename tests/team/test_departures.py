"""A team's files go only once the processes of teammates that left have ended (team/lead/departures.py): a real
claude writes a last idle notice as its pane closes, which made the removed team's folder again (interop CI)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from agentteams.pids import descendants, pid_alive
from agentteams.team.lead.departures import Departures
from agentteams.team.spawn.base import Handle
from tests.support.wait import wait_until


def _pane(script: str) -> subprocess.Popen[bytes]:
    """A pane's process: a shell with a child, as a real claude runs under one."""
    return subprocess.Popen(["sh", "-c", f"{script} & wait"], start_new_session=True)


def _noted(proc: subprocess.Popen[bytes]) -> Departures:
    wait_until(lambda: descendants(proc.pid) != [], 5, "the shell's child")
    departures = Departures()
    departures.note(Handle("alice", "tmux", pane_id="%1", pane_pid=proc.pid))
    return departures


def test_the_wait_ends_after_the_last_write_of_a_child_that_outlives_its_shell(tmp_path: Path) -> None:
    last = tmp_path / "last-words"
    proc = _pane(f"trap '' HUP; sleep 0.4; echo bye > {last}")
    departures = _noted(proc)
    os.killpg(proc.pid, signal.SIGHUP)  # the pane closed: the shell goes at once, its child a moment later
    proc.wait(timeout=5)
    departures.wait(timeout=5)
    assert last.read_text() == "bye\n", "the wait returned before the child's last write"


def test_a_straggler_is_killed_at_the_deadline(tmp_path: Path) -> None:
    proc = _pane("trap '' HUP TERM; sleep 30")
    departures = _noted(proc)
    child = descendants(proc.pid)
    started = time.monotonic()
    departures.wait(timeout=0.3)
    assert time.monotonic() - started < 3
    proc.wait(timeout=5)
    assert not any(pid_alive(pid) for pid in child)


def test_nothing_noted_or_a_thread_teammate_is_no_wait() -> None:
    departures = Departures()
    departures.note(Handle("bob", "in-process"))
    started = time.monotonic()
    departures.wait(timeout=5)
    assert time.monotonic() - started < 0.5
