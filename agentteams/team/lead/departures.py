"""Teammates that have left while their processes may still be ending: a team's files are removed only once those have
ended (a real claude writes a last idle notice as it goes, which would make the removed team's folders again)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

from agentteams.pids import descendants, pid_alive, proc_start
from agentteams.team.spawn.base import Handle

DEPARTURE_WAIT = 5.0  # seconds the processes of teammates that left get to end before they are killed
LOOK = 0.02  # seconds between looks at them (/proc reads only)


class Departures:
    """The processes of teammates whose panes were closed, by pid and start time (a reused pid is not theirs)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: list[tuple[int, str | None]] = []

    def note(self, handle: Handle) -> None:
        """Before its pane is closed: the pane's process and every process under it (a real claude runs under a
        shell, and outlives it for a moment)."""
        if handle.pane_pid is None:
            return  # a thread of ours, or a teammate on another machine
        found = [(pid, proc_start(pid)) for pid in (handle.pane_pid, *descendants(handle.pane_pid))]
        with self._lock:
            self._procs += [(pid, started) for pid, started in found if started is not None]

    def _running(self) -> list[tuple[int, str | None]]:
        with self._lock:
            self._procs = [(pid, s) for pid, s in self._procs if pid_alive(pid) and proc_start(pid) == s]
            return list(self._procs)

    def wait(self, timeout: float = DEPARTURE_WAIT) -> None:
        """Return once every noted process has ended; past `timeout`, kill what is left (and give it a moment)."""
        deadline = time.monotonic() + timeout
        while (left := self._running()) and time.monotonic() < deadline:
            time.sleep(LOOK)
        for pid, _started in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        end = time.monotonic() + 1.0
        while self._running() and time.monotonic() < end:
            time.sleep(LOOK)
