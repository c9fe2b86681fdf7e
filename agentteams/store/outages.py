"""A store that was away (a Redis restarted, paused or cut off): the error a command gives once the store has not
answered for longer than its deadline, and the rule that no one is judged gone from what a store said while it was
away or just after it came back (its records of live agents expired then, unrenewed)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from agentteams.errors import AgentTeamsError

Steady = Callable[[], float]  # seconds the store has answered since it was last away (inf: it never was)


class StoreUnavailable(AgentTeamsError):
    """The store has not answered for longer than its deadline: this command failed (the store said so once, in one
    line); a runtime's loop goes on and tries again at its next round."""


def judged(steady: Steady, grace: float) -> bool:
    """Whether a verdict on liveness may be drawn from the store now: it has answered for `grace` seconds since it
    was last away, long enough for every live agent to have renewed what expired meanwhile."""
    return steady() >= grace


ENV_GIVE_UP = "AGENTTEAMS_STORE_GIVE_UP"  # seconds of a store away after which a team's runtimes stop waiting for it
DEFAULT_GIVE_UP = 600.0  # as long as teammates wait for a dead lead: time to bring a server back


def give_up_after() -> float:
    try:
        return max(1.0, float(os.environ.get(ENV_GIVE_UP, "") or DEFAULT_GIVE_UP))
    except ValueError:
        return DEFAULT_GIVE_UP


class AwayClock:
    """How long one loop has found its store away (StoreUnavailable round after round): past `give_up_after()` a
    runtime stops waiting for it, so no wait lasts for ever."""

    def __init__(self) -> None:
        self.since: float | None = None

    def failed(self) -> bool:
        """A round found the store away; True once it has been away past the limit."""
        now = time.monotonic()
        self.since = now if self.since is None else self.since
        return now - self.since > give_up_after()

    def answered(self) -> None:
        self.since = None
