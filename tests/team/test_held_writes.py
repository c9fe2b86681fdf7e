"""HeldWrites (team/held_writes.py): a write the disk refused is kept and written again in order, the latest under a
key replacing an older one; any other error is the writer's own and is not kept."""

from __future__ import annotations

import errno

import pytest

from agentteams.errors import AgentTeamsError, NotSentError
from agentteams.team.held_writes import HeldWrites


class Disk:
    def __init__(self) -> None:
        self.full = False
        self.written: list[str] = []

    def put(self, what: str) -> None:
        if self.full:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.written.append(what)


def test_refused_writes_are_written_in_order_once_there_is_room() -> None:
    disk, held = Disk(), HeldWrites("alice")
    disk.full = True
    held.write("isActive", lambda: disk.put("inactive"), "team files", "config")
    held.write("idle notice", lambda: disk.put("idle"), "inbox", "lead")
    held.write("isActive", lambda: disk.put("inactive again"), "team files", "config")  # replaces, goes last
    assert held.pending and not held.retry() and disk.written == []
    disk.full = False
    assert held.retry() and not held.pending
    assert disk.written == ["idle", "inactive again"]


def test_a_new_write_goes_after_the_held_ones() -> None:
    disk, held = Disk(), HeldWrites("alice")
    disk.full = True
    held.write("idle notice", lambda: disk.put("idle"), "inbox", "lead")
    disk.full = False
    held.write("isActive", lambda: disk.put("active"), "team files", "config")
    assert disk.written == ["idle", "active"] and not held.pending


def test_a_message_taken_back_is_held_another_error_is_not() -> None:
    held = HeldWrites("alice")

    def not_sent() -> None:
        raise NotSentError("cannot write inbox: No space left on device; the message was not sent")

    def gone() -> None:
        raise AgentTeamsError("no team named proj")

    held.write("idle notice", not_sent, "inbox", "lead")
    assert held.pending
    held = HeldWrites("bob")
    with pytest.raises(AgentTeamsError):
        held.write("isActive", gone, "team files", "config")
    assert not held.pending
