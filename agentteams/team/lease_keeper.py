"""Task leases at run time (store/leases.py keeps them): an agent's heartbeat renews the leases of the tasks it
owns; the lead's team thread, and a teammate about to claim, send back to pending the tasks whose owner of ours
let its lease run out."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from agentteams.errors import AgentTeamsError
from agentteams.store.api import Tasks
from agentteams.store.leases import TakenBack, lease_seconds
from agentteams.store.outages import Steady, judged
from agentteams.team import heartbeat
from agentteams.team.delivery import TeamEvent


def sweep_every() -> float:
    """Seconds between one agent's sweeps (each reads the whole task list): a tenth of a lease, 0.2 to 5."""
    return min(max(lease_seconds() / 10, 0.2), 5.0)


def sweep_grace() -> float:
    """Seconds the store must have answered, after it was away, before a run-out lease is taken back: two beats."""
    return 2 * heartbeat.interval() + 1.0


class LeaseKeeper:
    """One agent's part in task leases: renewing its own, and sweeping its team's."""

    def __init__(self, tasks: Tasks, name: str, steady: Steady | None = None) -> None:
        self.tasks = tasks
        self.name = name
        self.steady = steady or (lambda: float("inf"))  # how long the store has answered since it was away
        self._swept = 0.0  # monotonic time of the last sweep
        self._renewed = 0.0  # and of the last renewal (the lead's, which no heartbeat thread drives)

    def renew(self, team: str) -> None:
        """Renew (or take) the leases of this agent's open tasks; a failure waits for the next beat."""
        with contextlib.suppress(AgentTeamsError, OSError):
            self.tasks.renew_leases(team, self.name)

    def riding(self, beat: Callable[[], bool], team: str) -> Callable[[], None]:
        """`beat` (a presence beat) followed by a renewal when it did beat: a stalled agent renews nothing."""

        def both() -> None:
            if beat():
                self.renew(team)

        return both

    def sweep(self, team: str) -> list[TakenBack]:
        """Tasks sent back to pending now; nothing if this agent swept less than `sweep_every()` ago."""
        now = time.monotonic()
        if now - self._swept < sweep_every() or not judged(self.steady, sweep_grace()):
            return []  # a lease that ran out while the store was away: its owner renews it at its next beat
        self._swept = now
        try:
            return self.tasks.sweep_leases(team)
        except (AgentTeamsError, OSError):
            return []  # the next sweep tries again

    def tick(self, team: str) -> list[TeamEvent]:
        """The lead's turn of its team thread: its own renewal when a beat is due, a sweep, one line per task."""
        now = time.monotonic()
        if now - self._renewed >= heartbeat.interval():
            self._renewed = now
            self.renew(team)
        return [TeamEvent("notice", back.owner, back.line()) for back in self.sweep(team)]
