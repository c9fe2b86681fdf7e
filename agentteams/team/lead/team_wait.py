"""The lead's team-thread wait: its inbox (inotify) and its tmux teammates' pane processes (pidfds) wake it at once,
so while every teammate's end is an event it looks at the rest (budgets, beats, leases) four times less often."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from types import TracebackType

from agentteams.pids import proc_start
from agentteams.store.api import Waiter
from agentteams.team import heartbeat
from agentteams.team.lease_keeper import sweep_every
from agentteams.team.spawn.base import Handle

STRETCH = 4  # an idle tick this many times the lead's check period, when every teammate's death wakes it


class TeamWait:
    """Waits on the lead's inbox watcher and a pidfd per tmux teammate's pane process.

    A pidfd that fired is not polled again (it stays readable): the tick it woke has handled that death.
    """

    def __init__(self, watcher: Waiter, handles: Mapping[str, Handle]) -> None:
        self.watcher = watcher
        self.handles = handles  # the lead's own dict: read at each wait, never changed here
        self._fds: dict[str, tuple[Handle, int | None]] = {}  # name -> (handle, its pidfd; None: cannot watch)
        self._fired: set[int] = set()

    def wait(self, every: float, *, stretch: bool = True) -> bool:
        """Until news, a teammate's end, or the tick: `every` s, or (`stretch`) STRETCH times that while every
        teammate's end is an event (never longer than a heartbeat or a lease sweep's period). True on news."""
        fds = self._sync()
        watched = stretch and all(fd is not None for _, fd in self._fds.values())
        timeout = min(every * STRETCH, heartbeat.interval(), sweep_every()) if watched else every
        live = [fd for fd in fds if fd not in self._fired]
        news = self.watcher.wait(max(timeout, every), fds=live)
        for fd in live:
            if _readable(fd):
                self._fired.add(fd)
        return news

    def _sync(self) -> list[int]:
        """Open a pidfd for each new teammate, close those of teammates that left; the open ones."""
        current = dict(self.handles)
        for name in [n for n, (h, _) in self._fds.items() if current.get(n) is not h]:
            self._close(name)
        for name, handle in current.items():
            if name not in self._fds:
                self._fds[name] = (handle, _pidfd(handle))
        return [fd for _, fd in self._fds.values() if fd is not None]

    def _close(self, name: str) -> None:
        _, fd = self._fds.pop(name)
        if fd is not None:
            self._fired.discard(fd)
            os.close(fd)

    def close(self) -> None:
        for name in list(self._fds):
            self._close(name)

    def __enter__(self) -> TeamWait:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _pidfd(handle: Handle) -> int | None:
    """A pidfd for the teammate's pane process, if it is the one spawned (same start time); else None."""
    pid, started = handle.pane_pid, handle.pane_started
    if pid is None or started is None or not hasattr(os, "pidfd_open"):
        return None
    try:
        fd = os.pidfd_open(pid)
    except OSError:  # gone already: the next liveness check says so
        return None
    if proc_start(pid) != started:  # the pid was reused: not our teammate
        os.close(fd)
        return None
    return fd


def _readable(fd: int) -> bool:
    import select

    with contextlib.suppress(OSError):
        return bool(select.select([fd], [], [], 0)[0])
    return False
