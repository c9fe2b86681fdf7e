"""A failed send takes its message back (store/file/withdraw.py), wherever it waits: the spool, or the in-flight batch
of the committer that failed, which also holds other senders' messages; those are still delivered, each once."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from agentteams.errors import AgentTeamsError
from agentteams.store.api import new_envelope
from agentteams.store.file import spool as spool_module
from agentteams.store.file.inbox_file import in_flight_file, spool_file
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.withdraw import withdraw
from agentteams.store.fs.atomic_json import dump_compact, encode
from agentteams.store.paths import Layout
from tests.support.builders import team_with_members


@pytest.fixture
def box(layout: Layout) -> Mailbox:
    team_with_members(layout, "t", "alice")
    return Mailbox(layout)


def spooled_by_another_sender(inbox: Path, text: str) -> str:
    """A message another sender has spooled and is waiting to see committed."""
    env = new_envelope("bob", text)
    with open(spool_file(inbox), "ab") as f:
        f.write(b"\n" + encode(dump_compact(env.to_json())) + b"\n")
    assert env.msg_id is not None
    return env.msg_id


def test_a_failed_commit_takes_back_only_its_own_message(
    box: Mailbox, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    box.send("t", "alice", "before", sender="team-lead")
    inbox = layout.inbox_file("t", "alice")
    other = spooled_by_another_sender(inbox, "bob's, waiting")

    def full(path: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path) + ".tmp.0")

    monkeypatch.setattr(spool_module, "atomic_write_bytes", full)  # where the commit writes the inbox
    with pytest.raises(AgentTeamsError) as failed:
        box.send("t", "alice", "mine, failed", sender="team-lead")
    assert str(failed.value).startswith(f"cannot write {inbox}: No space left on device (")
    assert str(failed.value).endswith("; the message was not sent")
    batch = in_flight_file(inbox).read_bytes()  # the failed committer's batch: bob's is still in it
    assert other.encode() in batch and b"mine, failed" not in batch

    monkeypatch.undo()  # room again
    box.send("t", "alice", "after", sender="team-lead")
    texts = [e.text for e in box.read_all("t", "alice")]
    assert texts == ["before", "bob's, waiting", "after"]  # bob's once, the failed one never
    assert not in_flight_file(inbox).exists()


def test_where_a_message_is_when_its_send_gives_up(box: Mailbox, layout: Layout) -> None:
    inbox = layout.inbox_file("t", "alice")
    box.send("t", "alice", "delivered", sender="team-lead")
    [env] = box.read_live("t", "alice")
    assert withdraw(inbox, encode(dump_compact(env.msg_id)), holding_lock=False) == "delivered"
    waiting = spooled_by_another_sender(inbox, "in the spool")
    assert withdraw(inbox, encode(dump_compact(waiting)), holding_lock=False) == "withdrawn"
    assert spool_file(inbox).read_bytes().strip() == b""
    taken = spooled_by_another_sender(inbox, "in flight")
    spool_file(inbox).rename(in_flight_file(inbox))  # a committer of another process has it
    assert withdraw(inbox, encode(dump_compact(taken)), holding_lock=False) == "queued"
    assert withdraw(inbox, encode(dump_compact(taken)), holding_lock=True) == "withdrawn"
    assert not in_flight_file(inbox).exists()  # an emptied batch is removed: nothing to recover
    assert withdraw(inbox, encode(dump_compact("never-sent")), holding_lock=True) == "absent"
