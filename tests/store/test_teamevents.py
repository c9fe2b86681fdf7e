"""Member events from two versions of a team config (pure: the Redis store writes them to the team's stream)."""

from __future__ import annotations

from agentteams.store.file.teams import new_config
from agentteams.store.member_events import MemberEvent, member_events
from agentteams.store.records import Member, TeamConfig


def config(*members: Member, departed: list[Member] | None = None) -> TeamConfig:
    c = new_config("t", None, "s", None, "team-lead", "/", "", None, None)
    c.members += list(members)
    c.departed = departed
    return c


def test_each_kind_of_change_is_one_event() -> None:
    alice, bob = (
        Member(agent_id="alice@t", name="alice", joined_at=1),
        Member(agent_id="bob@t", name="bob", joined_at=1),
    )
    assert member_events(config(), config(alice)) == [MemberEvent("joined", "alice")]
    assert member_events(config(alice, bob), config(bob)) == [MemberEvent("left", "alice")]
    assert member_events(config(alice), config(departed=[alice])) == [MemberEvent("died", "alice")]
    assert member_events(config(departed=[alice]), config(alice)) == [MemberEvent("returned", "alice")]
    planning = Member(agent_id="alice@t", name="alice", joined_at=1, mode="plan", model="haiku")
    assert member_events(config(alice), config(planning)) == [
        MemberEvent("mode", "alice", "plan"), MemberEvent("model", "alice", "haiku")]  # fmt: skip
    busy = Member(agent_id="alice@t", name="alice", joined_at=1, is_active=True)
    assert member_events(config(alice), config(busy)) == [], "isActive is no membership change"
    assert member_events(config(alice), config(alice)) == []
