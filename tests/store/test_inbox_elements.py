"""Inbox elements one by one, as Claude Code 2.1.330 checks them: a bad element leaves the live inbox for the
rejects file beside it (one warning each), the good ones around it are still delivered, and we never write one."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentteams.store.api import new_envelope
from agentteams.store.file.inbox_file import rejected_file
from agentteams.store.file.mailbox import FULL_CHECK_BYTES, Mailbox
from agentteams.store.fs.atomic_json import dump_json
from agentteams.store.paths import Layout
from agentteams.store.records import Envelope, ShapeError
from tests.support.builders import team_with_members
from tests.support.schema330 import element_faults, inbox_faults

GOOD_1 = {"from": "bob", "text": "before", "timestamp": "2030-01-01T00:00:00.000Z", "color": "green",
          "msgV": 1, "msg_id": "m-1", "type": "message", "read": False}  # fmt: skip
GOOD_2 = {"from": "team-lead", "text": "after", "timestamp": "2030-01-01T00:00:01.000Z"}
BASE = {"from": "bob", "text": "bad", "timestamp": "2030-01-01T00:00:02.000Z"}

# (element, what our warning says about it): every way REPORT-2.1.330 §3.2 lists, and an element's other shapes
BAD_ELEMENTS: list[tuple[Any, str]] = [
    (1, "expected an object, got number"),
    ("text", "expected an object, got string"),
    (None, "expected an object, got null"),
    ([BASE], "expected an object, got array"),
    ({**BASE, "from": 1}, "'from' must be string, not number"),
    ({"text": "no sender", "timestamp": BASE["timestamp"]}, "missing 'from'"),
    ({"from": "bob", "timestamp": BASE["timestamp"]}, "missing 'text'"),
    ({"from": "bob", "text": "no time"}, "missing 'timestamp'"),
    ({**BASE, "timestamp": 1795433868370}, "'timestamp' must be string, not number"),
    ({**BASE, "text": None}, "'text' must be string, not null"),
    ({**BASE, "summary": None}, "'summary' must be string, not null"),
    ({**BASE, "color": None}, "'color' must be string, not null"),
    ({**BASE, "from_plugin": None}, "'from_plugin' must be string, not null"),
    ({**BASE, "from_plugin": 7}, "'from_plugin' must be string, not number"),
    ({**BASE, "type": None}, "'type' must be string, not null"),
    ({**BASE, "type": {"kind": "message"}}, "'type' must be string, not object"),
    ({**BASE, "read": None}, "'read' must be boolean, not null"),
    ({**BASE, "read": "false"}, "'read' must be boolean, not string"),
    ({**BASE, "read": 0}, "'read' must be boolean, not number"),
]
IDS = [why for _, why in BAD_ELEMENTS]


@pytest.fixture
def box(layout: Layout) -> Mailbox:
    team_with_members(layout, "t", "alice", "bob")
    return Mailbox(layout)


class Warnings:
    """The warning lines logged so far, read when asked."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        caplog.set_level(logging.WARNING, logger="agentteams")
        self.caplog = caplog

    def __call__(self) -> list[str]:
        return [r.getMessage() for r in self.caplog.records if r.levelno == logging.WARNING]


@pytest.fixture
def warnings(caplog: pytest.LogCaptureFixture) -> Warnings:
    return Warnings(caplog)


def rejects(inbox: Path) -> list[dict[str, Any]]:
    path = rejected_file(inbox)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def no_corrupt_asides(inbox: Path) -> bool:
    return not list(inbox.parent.glob("*.corrupt-*"))


def test_the_independent_checker_agrees_with_the_report() -> None:
    # the judge itself must be able to fail: each bad element is faulted, the good ones are not
    for element, _ in BAD_ELEMENTS:
        assert element_faults(element), element
    assert element_faults(GOOD_1) == element_faults(GOOD_2) == []
    assert element_faults({**GOOD_2, "unknownKey": None, "msg_id": None}) == []  # unknown keys and msg_id: free


@pytest.mark.parametrize(("element", "why"), BAD_ELEMENTS, ids=IDS)
def test_envelope_parsing_refuses_what_2_1_330_drops(element: Any, why: str) -> None:
    assert Envelope.problem(element) == why
    with pytest.raises(ShapeError, match="^" + re.escape(f"where: {why}") + "$"):
        Envelope.from_json(element, "where")


def test_envelope_parsing_keeps_what_2_1_330_keeps() -> None:
    minimal = Envelope.from_json(GOOD_2)
    assert minimal.type is None and minimal.read is None and minimal.unread  # a missing type means "message"
    full = {**GOOD_1, "summary": "s", "from_plugin": "plug", "lead_sig": "sig", "futureKey": [None]}
    env = Envelope.from_json(full)
    assert env.from_plugin == "plug"
    assert env.extra == {"lead_sig": "sig", "futureKey": [None]}
    assert dump_json(env.to_json()) == dump_json(full)  # key order and unknown keys kept
    made = Envelope(sender="a", text="t", timestamp="x", color="blue", from_plugin="plug", summary="s")
    assert list(made.to_json()) == ["from", "text", "summary", "timestamp", "color", "from_plugin"]


@pytest.mark.parametrize(("element", "why"), BAD_ELEMENTS, ids=IDS)
def test_a_bad_element_is_set_aside_on_read_and_the_rest_delivered(
    box: Mailbox, layout: Layout, warnings: Warnings, element: Any, why: str
) -> None:
    inbox = layout.inbox_file("t", "alice")
    inbox.write_text(dump_json([GOOD_1, element, GOOD_2]), encoding="utf-8")

    assert [e.text for e in box.read_live("t", "alice")] == ["before", "after"]

    assert inbox.read_text(encoding="utf-8") == dump_json([GOOD_1, GOOD_2])  # pruned; the rest byte for byte
    [aside] = rejects(inbox)
    assert aside["element"] == element and aside["index"] == 1
    assert aside["reason"] == f"{inbox}[1]: {why}"
    [line] = warnings()
    assert line.startswith(f"{inbox}[1]: {why}; ") and str(rejected_file(inbox)) in line
    assert "\n" not in line
    assert no_corrupt_asides(inbox)
    assert inbox_faults(inbox) == []
    # pruned once, reported once
    assert [e.text for e in box.unread("t", "alice")] == ["before", "after"]
    assert len(warnings()) == 1 and len(rejects(inbox)) == 1


def test_bad_elements_are_set_aside_when_a_message_arrives(box: Mailbox, layout: Layout, warnings: Warnings) -> None:
    inbox = layout.inbox_file("t", "alice")
    bad = [{**BASE, "summary": None}, 7, {**BASE, "read": "no"}]
    inbox.write_text(dump_json([bad[0], GOOD_1, bad[1], GOOD_2, bad[2]]), encoding="utf-8")

    env = box.send("t", "alice", "new", sender="team-lead")

    assert inbox.read_text(encoding="utf-8") == dump_json([GOOD_1, GOOD_2, env.to_json()])
    assert [(r["index"], r["element"]) for r in rejects(inbox)] == [(0, bad[0]), (2, bad[1]), (4, bad[2])]
    assert [w.split(":", 1)[0] for w in warnings()] == [f"{inbox}[{i}]" for i in (0, 2, 4)]
    assert no_corrupt_asides(inbox)
    assert inbox_faults(inbox) == []


def test_a_bad_element_arriving_before_mark_delivered_is_set_aside(
    box: Mailbox, layout: Layout, warnings: Warnings
) -> None:
    box.send("t", "alice", "one", sender="bob")
    seen = box.unread("t", "alice")
    inbox = layout.inbox_file("t", "alice")
    current = json.loads(inbox.read_text(encoding="utf-8"))
    inbox.write_text(dump_json([*current, {**BASE, "color": None}]), encoding="utf-8")  # a foreign writer

    assert box.mark_delivered("t", "alice", seen) == 1

    assert [e["read"] for e in json.loads(inbox.read_text(encoding="utf-8"))] == [True]
    assert [r["index"] for r in rejects(inbox)] == [1]
    assert len(warnings()) == 1
    assert inbox_faults(inbox) == []


def test_a_large_inbox_is_appended_unchecked_and_pruned_on_read(
    box: Mailbox, layout: Layout, warnings: Warnings
) -> None:
    inbox = layout.inbox_file("t", "alice")
    filler = [{**GOOD_2, "text": f"{i} " + "x" * 500} for i in range(150)]
    inbox.write_text(dump_json([*filler[:75], {**BASE, "read": None}, *filler[75:]]), encoding="utf-8")
    assert inbox.stat().st_size > FULL_CHECK_BYTES  # the send below splices without reading the elements

    box.send("t", "alice", "last", sender="team-lead")
    assert warnings() == []

    texts = [e.text for e in box.read_live("t", "alice")]
    assert texts == [*(f["text"] for f in filler), "last"]
    assert [r["index"] for r in rejects(inbox)] == [75]
    assert inbox_faults(inbox) == []


def test_the_rejects_file_is_no_inbox_and_goes_with_the_inbox(box: Mailbox, layout: Layout) -> None:
    inbox = layout.inbox_file("t", "alice")
    inbox.write_text(dump_json([GOOD_2, 1]), encoding="utf-8")
    box.read_live("t", "alice")
    assert rejected_file(inbox).exists()
    assert box.inbox_owners("t") == ["alice"]
    box.remove_inbox("t", "alice")
    assert not rejected_file(inbox).exists() and not inbox.exists()
    assert box.inbox_owners("t") == []
    box.teams.remove_member("t", "alice")  # the team's deletion takes the rest: bob's rejects too
    box.teams.remove_member("t", "bob")
    bob = layout.inbox_file("t", "bob")
    bob.write_text(dump_json([2]), encoding="utf-8")
    box.read_live("t", "bob")
    assert rejected_file(bob).exists()
    box.teams.delete("t")
    assert not layout.team_dir("t").exists()


texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20)
maybe = st.one_of(st.none(), texts)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(texts, maybe, maybe), min_size=1, max_size=4))
def test_we_never_write_an_element_2_1_330_drops(items: list[tuple[str, str | None, str | None]]) -> None:
    envs = [new_envelope("bob", text, summary=summary, color=color) for text, summary, color in items]
    for env in envs:
        assert element_faults(env.to_json()) == []
        env.read = True  # as delivery marks it
        assert element_faults(env.to_json()) == []


def test_a_woken_reader_builds_only_unread_messages_and_a_bad_one_among_them_takes_the_full_read(
    box: Mailbox, layout: Layout, warnings: Warnings
) -> None:
    inbox = layout.inbox_file("t", "alice")
    bad_read = {**BASE, "read": True, "color": None}  # delivered already: left for the next locked rewrite
    inbox.write_text(dump_json([{**GOOD_1, "read": True}, bad_read, GOOD_2]), encoding="utf-8")
    before = inbox.read_bytes()

    assert [e.text for e in box.unread("t", "alice")] == ["after"]
    assert inbox.read_bytes() == before and warnings() == []  # a look changes nothing

    seen = box.unread("t", "alice")
    assert box.mark_delivered("t", "alice", seen) == 1  # the rewrite sets the bad element aside, loses nothing
    assert [r["element"] for r in rejects(inbox)] == [bad_read] and len(warnings()) == 1
    assert [e.read for e in box.read_live("t", "alice")] == [True, True]

    bad_unread = {**BASE, "summary": None}
    inbox.write_text(dump_json([GOOD_1, bad_unread]), encoding="utf-8")
    assert [e.text for e in box.unread("t", "alice")] == ["before"]  # the full read: set aside at once
    assert [r["element"] for r in rejects(inbox)][-1] == bad_unread
