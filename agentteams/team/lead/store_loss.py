"""The lead's look at its store after the store was away: one that came back without the team (a Redis restarted
empty), or that stays away past its limit, ends the team, said plainly, rather than the lead waiting for ever."""

from __future__ import annotations

from agentteams.store.api import Store
from agentteams.store.outages import give_up_after


class StoreLoss:
    """Whether the team survived the store's restarts: looked at whenever this process connected to it anew (a
    server that restarted drops every connection, however fast it came back; the files never do)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._seen = store.connections()

    def lost(self, team: str) -> bool:
        """True when the store was connected to anew since the last look, and has no config for the team."""
        made = self.store.connections()
        if made == self._seen:
            return False
        gone = not self.store.teams.exists(team)
        self._seen = made
        return gone


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
