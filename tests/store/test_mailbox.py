"""The mailbox store: format, identity-based delivery, archive, spool recovery, broadcast."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentteams.errors import NotFoundError
from agentteams.store.api import new_envelope
from agentteams.store.file.inbox_file import append_to_array, in_flight_file, spool_file
from agentteams.store.file.mailbox import FULL_CHECK_BYTES, KEEP_DELIVERED, Mailbox
from agentteams.store.fs.atomic_json import dump_json
from agentteams.store.paths import Layout
from tests.support import ccref
from tests.support.builders import team_with_members


@pytest.fixture
def box(layout: Layout) -> Mailbox:
    team_with_members(layout, "t", "alice", "bob")
    return Mailbox(layout)


texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(texts, st.one_of(st.none(), texts)), max_size=6), st.integers(1, 4))
def test_byte_append_equals_a_full_redump(items: list[tuple[str, str | None]], batch: int) -> None:
    envs = [new_envelope("a", text, summary=summary) for text, summary in items]
    current = b"[]"
    for i in range(0, len(envs), batch):
        out = append_to_array(current, envs[i : i + batch])
        assert out is not None
        current = out
    assert current.decode() == dump_json([e.to_json() for e in envs])


def test_append_refuses_non_arrays() -> None:
    assert append_to_array(b'{"a": 1}', [new_envelope("a", "x")]) is None
    assert append_to_array(b"", [new_envelope("a", "x")]) is None


def test_send_writes_claude_code_envelopes(box: Mailbox, layout: Layout) -> None:
    env = box.send("t", "alice", "hi", sender="bob", summary="greeting")
    on_disk = json.loads(layout.inbox_file("t", "alice").read_text())
    assert on_disk == [env.to_json()]
    assert list(on_disk[0]) == [
        "from",
        "text",
        "summary",
        "timestamp",
        "color",
        "msgV",
        "msg_id",
        "type",
        "read",
    ]
    assert on_disk[0]["color"] == "green"  # bob's colour; the lead's messages carry none
    assert "color" not in box.send("t", "alice", "x", sender="team-lead").to_json()
    assert box.send("t", "alice@t", "by id", sender="team-lead").text == "by id"
    assert not spool_file(layout.inbox_file("t", "alice")).exists()  # taken by the commit
    assert not in_flight_file(layout.inbox_file("t", "alice")).exists()


def test_non_members_and_missing_teams_are_refused(box: Mailbox, layout: Layout) -> None:
    with pytest.raises(NotFoundError, match="not a member"):
        box.send("t", "mallory", "x", sender="team-lead")
    assert not layout.inbox_file("t", "mallory").exists()
    with pytest.raises(NotFoundError, match="no team"):
        box.send("nope", "alice", "x", sender="team-lead")


def test_delivery_is_by_identity_even_after_a_foreign_prune(box: Mailbox, layout: Layout) -> None:
    for i in range(3):
        box.send("t", "alice", f"m{i}", sender="team-lead")
    seen = box.unread("t", "alice")
    inbox = layout.inbox_file("t", "alice")
    ccref.locked_update(inbox, lambda cur: cur[1:])  # a real CLI reader pruned m0 meanwhile
    box.send("t", "alice", "m3", sender="team-lead")
    assert box.mark_delivered("t", "alice", seen[1:2]) == 1
    state = {e.text: e.read for e in box.read_live("t", "alice")}
    assert state == {"m1": True, "m2": False, "m3": False}


def test_seed_format_envelopes_are_matched_without_msg_id(box: Mailbox, layout: Layout) -> None:
    inbox = layout.inbox_file("t", "alice")
    old = {"from": "bob", "text": "old style", "timestamp": "2026-01-01T00:00:00.000Z", "color": "green"}
    inbox.write_text(json.dumps([old]))
    [env] = box.unread("t", "alice")
    assert env.msg_id is None and env.unread
    assert box.mark_delivered("t", "alice", [env]) == 1
    assert json.loads(inbox.read_text()) == [{**old, "read": True}]


def test_old_delivered_messages_move_to_history(box: Mailbox, layout: Layout) -> None:
    total = KEEP_DELIVERED + 15
    for i in range(total):
        box.send("t", "alice", f"m{i}", sender="team-lead")
    box.mark_delivered("t", "alice", box.unread("t", "alice")[:-5])
    live = box.read_live("t", "alice")
    assert len(live) == KEEP_DELIVERED + 5
    assert [e.text for e in live if e.unread] == [f"m{i}" for i in range(total - 5, total)]
    history = layout.history_file("t", "alice").read_text().splitlines()
    assert len(history) == total - 5 - KEEP_DELIVERED
    assert [e.text for e in box.read_all("t", "alice")] == [f"m{i}" for i in range(total)]


def test_a_torn_spool_line_is_dropped_and_others_survive(box: Mailbox, layout: Layout) -> None:
    inbox = layout.inbox_file("t", "alice")
    box.send("t", "alice", "first", sender="team-lead")
    spool_file(inbox).write_bytes(b'\n{"from": "x", "te')  # a writer killed mid-append
    box.send("t", "alice", "second", sender="team-lead")
    assert [e.text for e in box.read_live("t", "alice")] == ["first", "second"]


def test_a_commit_that_died_after_writing_the_inbox_is_not_duplicated(box: Mailbox, layout: Layout) -> None:
    inbox = layout.inbox_file("t", "alice")
    env = box.send("t", "alice", "once", sender="team-lead")
    in_flight_file(inbox).write_bytes(b"\n" + json.dumps(env.to_json()).encode() + b"\n")  # not unlinked
    box.send("t", "alice", "then this", sender="team-lead")
    assert [e.text for e in box.read_live("t", "alice")] == ["once", "then this"]
    assert not in_flight_file(inbox).exists()


def test_a_commit_that_died_before_writing_the_inbox_is_recovered(box: Mailbox, layout: Layout) -> None:
    inbox = layout.inbox_file("t", "alice")
    lost = new_envelope("bob", "taken from the spool, never written")
    in_flight_file(inbox).write_bytes(b"\n" + json.dumps(lost.to_json()).encode() + b"\n")
    box.send("t", "alice", "next", sender="team-lead")
    assert [e.text for e in box.read_live("t", "alice")] == ["taken from the spool, never written", "next"]


def test_broadcast_reaches_everyone_but_the_sender(box: Mailbox) -> None:
    assert box.broadcast("t", "all hands", sender="alice") == ["team-lead", "bob"]
    assert [e.text for e in box.unread("t", "bob")] == ["all hands"]
    assert box.unread("t", "alice") == []


def test_foreign_writes_are_read(box: Mailbox, layout: Layout) -> None:
    ccref.send(layout.inbox_file("t", "team-lead"), "alice", "from a real CLI")
    box.send("t", "team-lead", "from us", sender="bob")
    assert [e.text for e in box.unread("t", "team-lead")] == ["from a real CLI", "from us"]


def test_large_inboxes_are_appended_by_splicing_byte_identically(box: Mailbox, layout: Layout) -> None:
    inbox = layout.inbox_file("t", "alice")
    text = 'é\n"quoted" ' * 60
    sent = [box.send("t", "alice", f"{i} {text}", sender="bob", summary="s") for i in range(120)]
    assert inbox.stat().st_size > FULL_CHECK_BYTES  # so the later sends took the spliced path
    assert inbox.read_text(encoding="utf-8") == dump_json([e.to_json() for e in sent])
    inbox.write_bytes(inbox.read_bytes() + b"\n\n  ")  # trailing whitespace a hand edit may leave
    last = box.send("t", "alice", "after whitespace", sender="bob")
    assert [e.msg_id for e in box.read_live("t", "alice")] == [e.msg_id for e in [*sent, last]]
