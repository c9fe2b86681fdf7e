"""A store that was away (a Redis restarted, paused or cut off): the error a command gives once the store has not
answered for longer than its deadline, and the rule that no one is judged gone from what a store said while it was
away or just after it came back (its records of live agents expired then, unrenewed)."""

from __future__ import annotations

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
