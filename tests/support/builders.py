"""Builders of on-disk state through the real stores, each named by the shape it builds."""

from __future__ import annotations

from agentteams.store.file.mailbox import Sealer
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import Layout
from agentteams.store.records import Envelope
from agentteams.store.signing import Keyring


def team_with_members(layout: Layout, team: str, *members: str) -> None:
    """Team `team` (its lead included) with these teammates."""
    teams = TeamStore(layout)
    teams.create(team)
    for name in members:
        teams.add_member(team, NewMember(name=name))


def backdated(keys: Keyring) -> Sealer:
    """A lead's own signing, on envelopes dated long before any teammate started: outside the replay window."""

    def seal(team: str, to: str, env: Envelope) -> None:
        env.timestamp = "2020-01-01T00:00:00.000Z"
        keys.seal(team, to, env)

    return seal
