"""The lead's look at its store after the store was away: one that came back without the team (a Redis restarted
empty), or that stays away past its limit, ends the team, said plainly, rather than the lead waiting for ever."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from agentteams import diagnostics
from agentteams.store.api import Store
from agentteams.store.outages import AwayClock, give_up_after
from agentteams.team.spawn.base import Handle, Spawner


class StoreLoss:
    """Whether the team survived the store's restarts: looked at whenever this process connected to it anew (a
    server that restarted drops every connection, however fast it came back; the files never do). And how long the
    lead's team thread has found it away."""

    def __init__(
        self, store: Store, spawner: Spawner, handles: dict[str, Handle], *,
        forget: Callable[[str], None], ended: Callable[[str], None],
    ) -> None:  # fmt: skip
        self.store = store
        self.spawner = spawner
        self.handles = handles  # the lead's own dict: emptied when the team ends
        self._forget = forget  # what the lead keeps of one teammate besides its handle
        self._ended = ended  # the team is no longer led; the reason goes to the model
        self._seen = store.connections()
        self._away = AwayClock()

    def lost(self, team: str) -> bool:
        """True when the store was connected to anew since the last look, and has no config for the team."""
        made = self.store.connections()
        if made == self._seen:
            return False
        gone = not self.store.teams.exists(team)
        self._seen = made
        return gone

    def answered(self) -> None:
        """A round of the team thread reached the store."""
        self._away.answered()

    def gave_up(self) -> bool:
        """A round found the store away; True once it has been away past its limit (AGENTTEAMS_STORE_GIVE_UP)."""
        return self._away.failed()

    def end_lost(self, team: str) -> None:
        self.end(team, lost_notice(team, self.store.teams.location(team)))

    def end(self, team: str, text: str) -> None:
        """The store came back without the team, or never came back: say so, stop its teammates, end the team."""
        diagnostics.warning("%s", text)
        for name, handle in list(self.handles.items()):
            with contextlib.suppress(Exception):
                self.spawner.stop(handle)
            self.handles.pop(name, None)
            self._forget(name)
        self._ended(text)


def lost_notice(team: str, location: str) -> str:
    """What the person and the lead's model are told."""
    return (
        f"Team {team} is gone from its store ({location}): the store came back from an outage without it "
        "(restarted without its data?). Its members, tasks and messages are lost; the team has ended and its "
        "teammates were stopped."
    )


def unreachable_notice(team: str, error: Exception) -> str:
    """The store stayed away past its limit (AGENTTEAMS_STORE_GIVE_UP)."""
    return (
        f"Team {team} has ended here: {error}, past the {give_up_after():.0f} s a team waits for its store. Its "
        "teammates were told to stop; once the store is back, what it kept is there to start again from."
    )
