"""Bad input: corrupt JSON in each file kind, path-escaping names, unknown protocol types, a 1 MiB
message, a missing team, a non-member recipient. Each gives a clear error or is handled; nothing is lost.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentteams.errors import AgentTeamsError, CorruptFileError, InvalidNameError, NotFoundError
from agentteams.store.api import MAX_TEXT_CHARS
from agentteams.store.file.inbox_file import spool_file
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import dump_json
from agentteams.store.paths import Layout
from agentteams.store.protocol import TaskAssignment, UnknownMessage, parse_message
from tests.support.cli import Cli

STAMP = r"\d{8}T\d{12}Z(-\d+)?"


@pytest.fixture
def teams(layout: Layout) -> TeamStore:
    store = TeamStore(layout)
    store.create("t")
    store.add_member("t", NewMember(name="alice"))
    store.add_member("t", NewMember(name="bob"))
    return store


@pytest.fixture
def box(layout: Layout, teams: TeamStore) -> Mailbox:
    return Mailbox(layout, teams)


@pytest.fixture
def tasks(layout: Layout, box: Mailbox) -> TaskStore:
    return TaskStore(layout, box)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "agentteams" and r.levelno == logging.WARNING]


def asides(path: Path) -> list[Path]:
    found = sorted(path.parent.glob(f"{path.name}.corrupt-*"))
    for p in found:
        assert re.fullmatch(re.escape(path.name) + r"\.corrupt-" + STAMP, p.name), p.name
    return found


def inbox_items(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_bytes())
    assert isinstance(data, list)
    return data


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


# -- corrupt inbox -----------------------------------------------------------------------------------

# whole files that are no array of messages; an array's bad elements are set aside one by one (test_inbox_elements)
CORRUPT_INBOXES = [
    b"\x00\xff\xfe garbage {[",
    b'[{"from": "team-lead", "text": "cut off',
    b"{}",
    b'{"from": "team-lead", "text": "an object, not an array"}',
    b'"a string"',
    b"null",
]


@pytest.mark.parametrize("garbage", CORRUPT_INBOXES)
def test_a_corrupt_inbox_is_moved_aside_when_a_message_arrives(
    box: Mailbox, layout: Layout, caplog: pytest.LogCaptureFixture, garbage: bytes
) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    inbox = layout.inbox_file("t", "alice")
    inbox.write_bytes(garbage)

    env = box.send("t", "alice", "after the damage", sender="team-lead")

    [aside] = asides(inbox)
    assert aside.read_bytes() == garbage  # the original bytes, untouched
    assert inbox_items(inbox) == [env.to_json()]
    assert [e.text for e in box.unread("t", "alice")] == ["after the damage"]
    [warning] = warnings_of(caplog)
    assert str(inbox) in warning
    assert str(aside) in warning
    assert "\n" not in warning


@pytest.mark.parametrize("garbage", CORRUPT_INBOXES)
def test_a_corrupt_inbox_is_moved_aside_when_read(
    box: Mailbox, layout: Layout, caplog: pytest.LogCaptureFixture, garbage: bytes
) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    inbox = layout.inbox_file("t", "alice")
    inbox.write_bytes(garbage)

    assert box.read_live("t", "alice") == []

    [aside] = asides(inbox)
    assert aside.read_bytes() == garbage
    assert inbox.read_bytes() == b"[]"
    [warning] = warnings_of(caplog)
    assert str(aside) in warning
    box.send("t", "alice", "fresh", sender="bob")
    assert [e.text for e in box.read_all("t", "alice")] == ["fresh"]
    assert len(asides(inbox)) == 1


def test_an_inbox_corrupted_between_read_and_mark_delivered(
    box: Mailbox, layout: Layout, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    box.send("t", "alice", "one", sender="bob")
    seen = box.unread("t", "alice")
    inbox = layout.inbox_file("t", "alice")
    inbox.write_bytes(b"[{broken")

    assert box.mark_delivered("t", "alice", seen) == 0

    [aside] = asides(inbox)
    assert aside.read_bytes() == b"[{broken"
    assert inbox.read_bytes() == b"[]"
    assert len(warnings_of(caplog)) == 1


def test_an_empty_inbox_file_is_an_empty_inbox_not_a_corrupt_one(
    box: Mailbox, layout: Layout, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    inbox = layout.inbox_file("t", "alice")
    inbox.write_bytes(b"")  # a Claude Code writer caught between `wx` and its first write
    assert box.read_live("t", "alice") == []
    box.send("t", "alice", "hi", sender="bob")
    assert [e.text for e in box.read_live("t", "alice")] == ["hi"]
    assert asides(inbox) == []
    assert warnings_of(caplog) == []


# -- corrupt task file -------------------------------------------------------------------------------

CORRUPT_TASKS = [
    b"{oops",
    b"\xff\xfe\x00",
    b"",
    b"[]",
    b'{"id": "3"}',
    b'{"id": "3", "subject": "s", "status": "someday", "blocks": [], "blockedBy": []}',
    b'{"id": "3", "subject": "s", "blocks": [3], "blockedBy": []}',
]


@pytest.mark.parametrize("garbage", CORRUPT_TASKS)
def test_a_corrupt_task_is_moved_aside_and_its_id_never_reused(
    tasks: TaskStore, layout: Layout, caplog: pytest.LogCaptureFixture, garbage: bytes
) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    for subject in ("a", "b", "c"):
        tasks.create("t", subject)
    path = layout.task_file("t", "3")
    path.write_bytes(garbage)

    assert [t.id for t in tasks.list_tasks("t")] == ["1", "2"]

    [aside] = asides(path)
    assert aside.read_bytes() == garbage
    assert not path.exists()
    assert layout.highwatermark_file("t").read_bytes() == b"3"
    [warning] = warnings_of(caplog)
    assert str(path) in warning
    assert str(aside) in warning
    assert tasks.create("t", "d").id == "4"  # not 3, although no 3.json is left
    with pytest.raises(NotFoundError, match=r"task #3 not found"):
        tasks.get("t", "3")
    assert tasks.claim("t", "3", "alice").reason == "task_not_found"
    assert [t.id for t in tasks.list_tasks("t")] == ["1", "2", "4"]


def test_a_corrupt_task_found_by_get_is_moved_aside_too(
    tasks: TaskStore, layout: Layout, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    tasks.create("t", "a")
    tasks.create("t", "b", blocked_by=["1"])
    layout.task_file("t", "2").write_bytes(b'{"id": "2", "subj')
    with pytest.raises(NotFoundError, match=r"task #2 not found"):
        tasks.get("t", "2")
    [aside] = asides(layout.task_file("t", "2"))
    assert aside.read_bytes() == b'{"id": "2", "subj'
    assert len(warnings_of(caplog)) == 1
    assert tasks.create("t", "c").id == "3"
    assert tasks.get("t", "1").blocks == ["2"]  # the survivor is left as it is


# -- corrupt .highwatermark --------------------------------------------------------------------------


@pytest.mark.parametrize("garbage", [b"not a number", b"\xff\xfe", b"", b"3.5", b"{}"])
def test_a_garbage_highwatermark_counts_as_zero_but_ids_on_disk_are_never_reused(
    tasks: TaskStore, layout: Layout, garbage: bytes
) -> None:
    for subject in ("a", "b", "c"):
        tasks.create("t", subject)
    layout.highwatermark_file("t").write_bytes(garbage)

    assert tasks.create("t", "d").id == "4"
    assert [t.id for t in tasks.list_tasks("t")] == ["1", "2", "3", "4"]
    tasks.delete("t", "4")
    assert layout.highwatermark_file("t").read_bytes() == b"4"  # rewritten as a number
    assert tasks.create("t", "e").id == "5"


def test_a_highwatermark_above_the_files_wins(tasks: TaskStore, layout: Layout) -> None:
    tasks.create("t", "a")
    layout.highwatermark_file("t").write_bytes(b" 41\n")
    assert tasks.create("t", "b").id == "42"


# -- corrupt team config -----------------------------------------------------------------------------

CORRUPT_CONFIGS = [
    b'{"name": "t", "members": [',
    b"\xff\xfe\x00\x01",
    b"",
    b"[]",
    b"{}",
    b'{"name": "t", "createdAt": 1, "leadAgentId": "team-lead@t", "members": "everyone"}',
    b'{"name": "t", "createdAt": 1, "leadAgentId": "team-lead@t", "members": [{"name": 7}]}',
]


@pytest.mark.parametrize("garbage", CORRUPT_CONFIGS)
def test_a_corrupt_config_is_a_clear_error_and_left_untouched(
    teams: TeamStore, box: Mailbox, tasks: TaskStore, layout: Layout, garbage: bytes
) -> None:
    tasks.create("t", "a")
    config = layout.config_file("t")
    config.write_bytes(garbage)
    before = tree(layout.team_dir("t"))

    attempts: list[Callable[[], object]] = [
        lambda: teams.read("t"),
        lambda: teams.add_member("t", NewMember(name="carol")),
        lambda: teams.remove_member("t", "alice"),
        lambda: teams.set_active("t", "alice", True),
        lambda: teams.delete("t"),
        lambda: box.send("t", "alice", "hi", sender="team-lead"),
        lambda: box.broadcast("t", "hi", sender="team-lead"),
    ]
    for attempt in attempts:
        with pytest.raises(CorruptFileError) as caught:
            attempt()
        message = str(caught.value)
        assert str(config) in message
        assert "left as it is" in message
        assert "\n" not in message

    assert config.read_bytes() == garbage
    assert tree(layout.team_dir("t")) == before  # no aside file, no inbox, nothing new
    assert not layout.inbox_file("t", "alice").exists()
    [listed] = teams.list_teams()
    assert isinstance(listed, CorruptFileError)
    assert str(config) in str(listed)
    assert [t.id for t in tasks.list_tasks("t")] == ["1"]  # the task list does not need the config

    teams.delete("t", force=True)
    assert not layout.team_dir("t").exists()
    assert not layout.task_dir("t").exists()


def test_cli_reports_a_corrupt_config_in_one_line(cli: Cli, teams: TeamStore, layout: Layout) -> None:
    config = layout.config_file("t")
    config.write_bytes(b"{nope")
    for args in (("team", "show", "t"), ("msg", "send", "t", "alice", "hi"), ("team", "delete", "t")):
        proc = cli(*args)
        assert proc.returncode == 1
        [line] = proc.stderr.splitlines()
        assert line.startswith("agentteams: error: ")
        assert str(config) in line
    assert config.read_bytes() == b"{nope"


# -- path-escaping names -----------------------------------------------------------------------------

LONG = "x" * 300
REFUSED = ["..", ".", "", "   ", "@@@", "~", "/", "../..", LONG, "\x00", "\n", "a\x00b", "a\nb", "a\tb"]
SANITISED_TEAMS = {
    "../x": "---x",
    "/etc/passwd": "-etc-passwd",
    "a/../../b": "a-------b",
    "..\\..\\win": "------win",
    "Ünïcode": "-n-code",
}
SANITISED_INBOXES = {
    "../x": "---x.json",
    "/etc/passwd": "-etc-passwd.json",
    "a/../../b": "a-------b.json",
    "..\\..\\win": "------win.json",
}


def test_path_escaping_team_names_are_refused_or_stay_inside_the_root(config_root: Path, layout: Layout) -> None:
    store = TeamStore(layout)
    outside = sorted(os.listdir(config_root.parent))
    for raw in REFUSED:
        with pytest.raises(InvalidNameError) as caught:
            store.create(raw)
        assert "team name" in str(caught.value)
        assert "\n" not in str(caught.value)
        with pytest.raises(InvalidNameError):
            store.read(raw)
        with pytest.raises(InvalidNameError):
            TaskStore(layout).create(raw, "s")
    for raw, expected in SANITISED_TEAMS.items():
        config = store.create(raw)
        assert config.name == expected
        assert (layout.teams_dir / expected / "config.json").is_file()
        assert (layout.tasks_root / expected).is_dir()
    assert sorted(os.listdir(config_root.parent)) == outside
    assert sorted(os.listdir(config_root)) == ["tasks", "teams"]
    assert sorted(os.listdir(layout.teams_dir)) == sorted(SANITISED_TEAMS.values())
    for path in config_root.rglob("*"):
        assert path.resolve().is_relative_to(config_root.resolve())


def test_path_escaping_agent_names_are_refused_or_stay_inside_the_root(
    config_root: Path, layout: Layout, teams: TeamStore, box: Mailbox
) -> None:
    outside = sorted(os.listdir(config_root.parent))
    inboxes = layout.inbox_dir("t")
    for raw in REFUSED:
        with pytest.raises(InvalidNameError) as caught:
            teams.add_member("t", NewMember(name=raw))
        assert "agent name" in str(caught.value)
        with pytest.raises(InvalidNameError):
            box.read_live("t", raw)
    assert [m.name for m in teams.read("t").members] == ["team-lead", "alice", "bob"]
    for raw, inbox_name in SANITISED_INBOXES.items():
        member = teams.add_member("t", NewMember(name=raw))
        assert member.name == raw  # the name is kept; only its file name is sanitised
        box.send("t", member.name, f"to {raw!r}", sender="team-lead")
        inbox = layout.inbox_file("t", member.name)
        assert inbox == inboxes / inbox_name
        assert [e.text for e in box.read_live("t", raw)] == [f"to {raw!r}"]
    assert sorted(os.listdir(config_root.parent)) == outside
    assert sorted(p.name for p in inboxes.glob("*.json")) == sorted(SANITISED_INBOXES.values())
    for path in config_root.rglob("*"):
        assert path.resolve().is_relative_to(config_root.resolve())


def test_path_escaping_task_ids_are_refused(tasks: TaskStore) -> None:
    tasks.create("t", "a")
    for bad in ("../1", "1/../../x", "-1", "1.json", "", " ", "one", "１"):
        with pytest.raises(InvalidNameError, match="task id must be a positive whole number"):
            tasks.get("t", bad)
        with pytest.raises(InvalidNameError):
            tasks.create("t", "s", blocked_by=[bad])
    assert [t.id for t in tasks.list_tasks("t")] == ["1"]


# -- unknown protocol types --------------------------------------------------------------------------

FUTURE = '{"type":"future_thing","x":1}'


def test_an_unknown_protocol_type_survives_a_rewrite_byte_identically(box: Mailbox, layout: Layout) -> None:
    inbox = layout.inbox_file("t", "alice")
    foreign = [
        {
            "from": "future-peer",
            "text": FUTURE,
            "timestamp": "2030-01-01T00:00:00.000Z",
            "read": False,
            "futureKey": {"nested": [1, "two", None]},
        },
        {"from": "bob", "text": "plain", "timestamp": "2030-01-01T00:00:01.000Z", "read": False},
    ]
    inbox.write_bytes(dump_json(foreign).encode())

    envs = box.read_live("t", "alice")
    assert [e.text for e in envs] == [FUTURE, "plain"]
    assert envs[0].extra == {"futureKey": {"nested": [1, "two", None]}}
    message = parse_message(envs[0].text)
    assert isinstance(message, UnknownMessage)
    assert message.type_name == "future_thing"
    assert message.to_text() == FUTURE
    assert parse_message("plain") is None

    assert box.mark_delivered("t", "alice", envs[:1]) == 1

    expected = [{**foreign[0], "read": True}, foreign[1]]
    assert inbox.read_bytes() == dump_json(expected).encode()
    after = inbox_items(inbox)
    assert after[0]["text"] == FUTURE
    assert list(after[0]) == ["from", "text", "timestamp", "read", "futureKey"]
    assert [e.text for e in box.unread("t", "alice")] == ["plain"]


@pytest.mark.parametrize(
    "text",
    [
        FUTURE,
        '{"type":"future_thing","nested":{"a":[1,2,{"b":null}]},"ünï":"çødé"}',
        '{"type":"task_assignment","taskId":5}',  # a known type in a shape we cannot read
        '{"type":"task_assignment","taskId":"1","subject":"s","description":"","assignedBy":"x",'
        '"timestamp":"t","extraField":true}',
    ],
)
def test_protocol_text_we_cannot_fully_read_is_kept_verbatim(box: Mailbox, layout: Layout, text: str) -> None:
    message = parse_message(text)
    assert message is not None
    assert message.to_text() == text
    box.send("t", "alice", text, sender="future-peer")
    envs = box.read_live("t", "alice")
    box.mark_delivered("t", "alice", envs)
    [env] = box.read_live("t", "alice")
    assert env.text == text
    assert env.read is True


def test_a_known_type_still_parses_as_its_class() -> None:
    text = TaskAssignment(task_id="1", subject="s", description="d", assigned_by="x", timestamp="t").to_text()
    assert json.loads(text) == {
        "type": "task_assignment",
        "taskId": "1",
        "subject": "s",
        "description": "d",
        "assignedBy": "x",
        "timestamp": "t",
    }
    assert isinstance(parse_message(text), TaskAssignment)


def test_cli_shows_an_unknown_protocol_type(cli: Cli, box: Mailbox, layout: Layout) -> None:
    box.send("t", "alice", FUTURE, sender="future-peer")
    shown = cli("msg", "read", "t", "alice")
    assert shown.returncode == 0
    assert shown.stderr == ""
    assert f"  [future_thing] {FUTURE}\n" in shown.stdout
    marked = cli("msg", "read", "t", "alice", "--mark-read", "--json")
    assert marked.returncode == 0
    assert [e["text"] for e in json.loads(marked.stdout)] == [FUTURE]
    assert inbox_items(layout.inbox_file("t", "alice"))[0]["text"] == FUTURE
    assert inbox_items(layout.inbox_file("t", "alice"))[0]["read"] is True


# -- a 1 MiB message ---------------------------------------------------------------------------------

MIB = 1 << 20


def big_texts() -> list[str]:
    unit = 'αβγ 🎉 "quoted" \\ back\\slash\ttab\r\nline\u2028sep\u2029\x00\x1f end\n'
    mixed = (unit * (MIB // len(unit) + 1))[:MIB]
    return ["x" * MIB, mixed]


def test_a_1_mib_message_round_trips(box: Mailbox, layout: Layout) -> None:
    texts = big_texts()
    assert [len(t) for t in texts] == [MIB, MIB]
    inbox = layout.inbox_file("t", "alice")
    for text in texts:
        box.send("t", "alice", text, sender="bob", summary="big")
    box.send("t", "alice", "small after big", sender="bob")

    items = inbox_items(inbox)
    assert [i["text"] for i in items] == [*texts, "small after big"]
    envs = box.read_live("t", "alice")
    assert [e.text for e in envs] == [*texts, "small after big"]
    assert inbox.read_bytes() == dump_json([e.to_json() for e in envs]).encode()

    assert box.mark_delivered("t", "alice", envs[:1]) == 1
    assert [i["text"] for i in inbox_items(inbox)] == [*texts, "small after big"]
    assert [e.text for e in box.unread("t", "alice")] == [texts[1], "small after big"]


def test_cli_reads_a_1_mib_message_back_identically(cli: Cli, box: Mailbox) -> None:
    texts = big_texts()
    for text in texts:
        box.send("t", "alice", text, sender="bob")
    proc = cli("msg", "read", "t", "alice", "--json", "--mark-read")
    assert proc.returncode == 0
    assert [e["text"] for e in json.loads(proc.stdout)] == texts
    assert [e.read for e in box.read_live("t", "alice")] == [True, True]


def test_an_oversized_message_is_refused_and_nothing_is_written(box: Mailbox, layout: Layout) -> None:
    with pytest.raises(AgentTeamsError, match=f"the limit is {MAX_TEXT_CHARS}"):
        box.send("t", "alice", "y" * (MAX_TEXT_CHARS + 1), sender="bob")
    assert not layout.inbox_file("t", "alice").exists()
    assert not spool_file(layout.inbox_file("t", "alice")).exists()


# -- a missing team ----------------------------------------------------------------------------------


def test_a_missing_team_is_a_clear_error_and_creates_nothing(config_root: Path, layout: Layout) -> None:
    store = TeamStore(layout)
    box = Mailbox(layout, store)
    before = tree(config_root)
    attempts: list[Callable[[], object]] = [
        lambda: store.read("ghost"),
        lambda: store.delete("ghost"),
        lambda: store.delete("ghost", force=True),
        lambda: store.add_member("ghost", NewMember(name="alice")),
        lambda: store.set_active("ghost", "alice", True),
        lambda: box.send("ghost", "alice", "hello?", sender="team-lead"),
        lambda: box.broadcast("ghost", "hello?", sender="team-lead"),
    ]
    for attempt in attempts:
        with pytest.raises(NotFoundError, match="no team named 'ghost'"):
            attempt()
    assert store.list_teams() == []
    assert box.read_live("ghost", "alice") == []
    assert tree(config_root) == before
    assert not (config_root / "teams" / "ghost").exists()


def test_cli_on_a_missing_team_fails_in_one_line_and_creates_nothing(cli: Cli, config_root: Path) -> None:
    before = tree(config_root)
    commands = [
        ("team", "show", "ghost"),
        ("team", "delete", "ghost", "--force"),
        ("msg", "send", "ghost", "alice", "hi"),
        ("msg", "read", "ghost", "alice"),
        ("task", "create", "ghost", "s"),
        ("task", "claim", "ghost", "--agent", "alice"),
        ("task", "list", "ghost"),
    ]
    for args in commands:
        proc = cli(*args)
        assert proc.returncode == 1, args
        [line] = proc.stderr.splitlines()
        assert line.startswith("agentteams: error: ")
        assert "'ghost'" in line
        assert proc.stdout == ""
    assert tree(config_root) == before


# -- a non-member recipient --------------------------------------------------------------------------


def test_a_message_to_a_non_member_is_refused_without_a_phantom_inbox(box: Mailbox, layout: Layout) -> None:
    inboxes = layout.inbox_dir("t")
    box.send("t", "alice", "real", sender="bob")
    before = sorted(os.listdir(inboxes))
    for nobody in ("mallory", "Alice2", "team-lead-2", "../alice"):
        with pytest.raises(NotFoundError, match=r"is not a member of team 't' \(members: team-lead, alice, bob\)"):
            box.send("t", nobody, "psst", sender="bob")
    assert sorted(os.listdir(inboxes)) == before
    assert not layout.inbox_file("t", "mallory").exists()
    assert not spool_file(layout.inbox_file("t", "mallory")).exists()
    assert [e.text for e in box.read_live("t", "alice")] == ["real"]


def test_a_departed_member_gets_no_new_messages(box: Mailbox, teams: TeamStore, layout: Layout) -> None:
    box.send("t", "bob", "before", sender="team-lead")
    teams.remove_member("t", "bob")
    with pytest.raises(NotFoundError, match="'bob' is not a member"):
        box.send("t", "bob", "after", sender="team-lead")
    assert [e.text for e in box.read_live("t", "bob")] == ["before"]
    assert box.broadcast("t", "all", sender="team-lead") == ["alice"]
