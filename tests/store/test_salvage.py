"""A JSON array that does not parse whole, salvaged element by element (store/fs/salvage.py): each broken element
costs only its own exact bytes; the elements around it are kept, in Claude Code's layout and in a compact one."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from agentteams.store.file.mailbox import FULL_CHECK_BYTES, Mailbox
from agentteams.store.fs.salvage import salvage_array
from agentteams.store.paths import Layout
from tests.support.builders import team_with_members

A = {"from": "bob", "text": "before", "timestamp": "2030-01-01T00:00:00.000Z", "read": False}
B = {"from": "team-lead", "text": "after", "timestamp": "2030-01-01T00:00:01.000Z"}
BROKEN = '{\n    "from": "carol",\n    "text": "half a quote\n  }'  # a raw newline in a string: not JSON


def pretty(*parts: str) -> bytes:
    return ("[\n  " + ",\n  ".join(parts) + "\n]").encode()


def el(obj: dict[str, Any]) -> str:
    return json.dumps(obj, indent=2).replace("\n", "\n  ")


def test_a_broken_element_in_claude_codes_layout_costs_only_its_bytes() -> None:
    found = salvage_array(pretty(el(A), BROKEN, el(B)))
    assert found is not None
    assert found.elements == [(0, A), (2, B)]
    [bad] = found.bad
    assert (bad.index, bad.raw) == (1, BROKEN.encode())
    assert bad.reason.startswith("not valid JSON")


def test_a_compact_array_is_cut_at_each_object_that_parses() -> None:
    raw = ("[" + json.dumps(A) + ',{"from": "x", "text": "no end' + "," + json.dumps(B) + "]").encode()
    found = salvage_array(raw)
    assert found is not None
    assert found.elements == [(0, A), (2, B)]
    assert [b.raw for b in found.bad] == [b'{"from": "x", "text": "no end']


@pytest.mark.parametrize(
    ("raw", "elements", "bad"),
    [
        (pretty(el(A), el(B))[:-40], [(0, A)], 1),  # torn at its end: the tail is the broken element
        (b"[1, 2] trailing", [(0, 1), (1, 2)], 1),  # text after the array
        (b'[{"a": 1}, {"b": "\xff"}, {"c": 3}]', [(0, {"a": 1}), (2, {"c": 3})], 1),  # a byte that is no UTF-8
        (b'[{"s": "\xed\xb0\x80"}]', [(0, {"s": "\udc00"})], 0),  # an encoded lone surrogate is kept, as we write it
        (b"[1,]", [(0, 1)], 0),
    ],
)
def test_salvage_edges(raw: bytes, elements: list[tuple[int, Any]], bad: int) -> None:
    found = salvage_array(raw)
    assert found is not None
    assert found.elements == elements
    assert len(found.bad) == bad
    for b in found.bad:
        assert b.raw in raw  # exact bytes, never re-encoded


@pytest.mark.parametrize("raw", [b"{}", b'"text"', b"null", b"garbage ["])
def test_what_is_no_array_at_all_is_left_to_the_whole_file_quarantine(raw: bytes) -> None:
    assert salvage_array(raw) is None


@pytest.fixture
def box(layout: Layout) -> Mailbox:
    team_with_members(layout, "t", "alice")
    return Mailbox(layout)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def corrupt_files(inbox: Path) -> list[Path]:
    return sorted(inbox.parent.glob(f"{inbox.name}.corrupt-*"))


@pytest.mark.parametrize("how", ["read", "send", "mark_delivered"])
def test_a_broken_element_is_kept_apart_and_the_rest_delivered(
    box: Mailbox, layout: Layout, caplog: pytest.LogCaptureFixture, how: str
) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    inbox = layout.inbox_file("t", "alice")
    inbox.write_bytes(pretty(el(A), BROKEN, el(B)))

    if how == "read":
        texts = [e.text for e in box.read_live("t", "alice")]
        assert texts == ["before", "after"]
    elif how == "send":
        box.send("t", "alice", "new", sender="team-lead")
    else:
        [first] = [e for e in Mailbox(layout).unread("t", "alice") if e.text == "before"]
        assert box.mark_delivered("t", "alice", [first]) == 1

    [aside] = corrupt_files(inbox)
    assert aside.read_bytes() == BROKEN.encode()  # its exact bytes
    [line] = warnings_of(caplog)
    assert f"{inbox}[1]" in line and str(aside) in line and "\n" not in line
    texts = [e.text for e in box.read_live("t", "alice")]
    assert texts[:2] == ["before", "after"]
    assert json.loads(inbox.read_bytes())  # the inbox is whole JSON again, for a real claude too
    assert len(corrupt_files(inbox)) == 1 and len(warnings_of(caplog)) == 1  # set aside once


def test_a_large_inbox_torn_at_its_end_keeps_its_elements_when_a_message_arrives(
    box: Mailbox, layout: Layout, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    inbox = layout.inbox_file("t", "alice")
    many = [el({**B, "text": f"{i} " + "x" * 500}) for i in range(150)]
    torn = pretty(*many)[:-200]
    assert len(torn) > FULL_CHECK_BYTES
    inbox.write_bytes(torn)

    box.send("t", "alice", "last", sender="team-lead")

    texts = [e.text for e in box.read_live("t", "alice")]
    assert texts[-1] == "last" and len(texts) == 150  # 149 whole ones kept, the torn one set aside
    [aside] = corrupt_files(inbox)
    assert torn.endswith(aside.read_bytes())
