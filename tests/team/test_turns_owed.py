"""The -p lead's looks at a teammate that took a message (team/turns_owed.py), replayed from two timelines of a real
claude 2.1.330 teammate (tests/interop/test_interop_forgery.py, under load): it pruned its inbox, then wrote
isActive: true ~1.6 s later; and a message it took mid-turn became its next turn ~1.8 s after its idle."""

from __future__ import annotations

from agentteams.team.turns_owed import OWED_SECONDS, TurnsOwed

MSG = ("id", "m1")


def test_a_message_taken_while_idle_is_owed_until_a_turn_begins() -> None:
    owed = TurnsOwed()
    assert not owed.look("alice", False, [MSG], 0.0)  # waiting: the unread message itself holds the lead
    assert owed.look("alice", False, [], 0.1)  # pruned, isActive not yet written
    assert owed.look("alice", False, [], 1.7)
    assert not owed.look("alice", True, [], 1.75)  # its turn shows
    assert not owed.look("alice", False, [], 3.0)  # and ends: done


def test_a_message_taken_mid_turn_is_owed_after_the_turn_until_the_next_begins() -> None:
    owed = TurnsOwed()
    assert not owed.look("alice", True, [MSG], 0.0)
    assert not owed.look("alice", True, [], 0.7)  # taken while working on something else
    assert owed.look("alice", False, [], 1.0)  # that turn ends: the message's turn is still to come
    assert owed.look("alice", False, [], 2.8)
    assert not owed.look("alice", True, [], 2.9)
    assert not owed.look("alice", False, [], 4.0)


def test_a_message_taken_by_the_turn_it_starts_owes_nothing_more() -> None:
    owed = TurnsOwed()
    assert not owed.look("alice", False, [MSG], 0.0)
    assert not owed.look("alice", True, [], 0.5)  # taken and working between two looks
    assert not owed.look("alice", False, [], 2.0)


def test_a_turn_that_never_shows_is_waited_for_only_so_long() -> None:
    owed = TurnsOwed()
    owed.look("bob", True, [MSG], 0.0)
    owed.look("bob", True, [], 0.5)  # taken into the turn it was in (ours steers it there): no later turn comes
    assert owed.look("bob", False, [], 1.0)
    assert not owed.look("bob", False, [], 1.0 + OWED_SECONDS)
    assert not owed.look("carol", False, [], 0.0)  # never seen with mail: owes nothing
