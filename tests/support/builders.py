"""Builders of on-disk state through the real stores, each named by the shape it builds."""

from __future__ import annotations

from agentteams.store.paths import Layout
from agentteams.store.teams import NewMember, TeamStore


def team_with_members(layout: Layout, team: str, *members: str) -> None:
    """Team `team` (its lead included) with these teammates."""
    teams = TeamStore(layout)
    teams.create(team)
    for name in members:
        teams.add_member(team, NewMember(name=name))
