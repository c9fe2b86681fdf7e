"""The low-level CLI, driven as a real subprocess: outputs, `--json`, exit codes, one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentteams import __version__
from agentteams.store.file.mailbox import KEEP_DELIVERED, Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import TeamStore
from agentteams.store.fs.atomic_json import dump_compact
from agentteams.store.paths import Layout
from tests.support.builders import team_with_members
from tests.support.cli import Cli
from tests.support.cli_result import Result, error, one_line_failure, run

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def ok(cli: Cli, *args: str) -> Result:
    result = run(cli, *args)
    assert result.code == 0, result
    assert result.err == "", result
    return result


def inbox_json(layout: Layout, team: str, agent: str) -> list[dict[str, Any]]:
    data = json.loads(layout.inbox_file(team, agent).read_bytes())
    assert isinstance(data, list)
    return data


@pytest.fixture
def team(layout: Layout) -> str:
    """Team `t` with members alice and bob, created in-process."""
    team_with_members(layout, "t", "alice", "bob")
    return "t"


# -- top level ---------------------------------------------------------------------------------------


def test_version_and_help(cli: Cli) -> None:
    assert ok(cli, "--version").out == f"agentteams {__version__}\n"
    assert ok(cli, "-v").out == f"agentteams {__version__}\n"
    top = ok(cli, "--help").out
    for group in ("team", "task", "msg"):
        assert group in top
    commands = {
        "team": ("create", "show", "list", "delete"),
        "task": ("create", "list", "get", "update", "claim", "delete"),
        "msg": ("send", "broadcast", "read"),
    }
    for group, names in commands.items():
        text = ok(cli, group, "--help").out
        for name in names:
            assert name in text, (group, name)
    assert "--mark-read" in ok(cli, "msg", "read", "--help").out
    assert "--force" in ok(cli, "team", "delete", "--help").out


# -- teams -------------------------------------------------------------------------------------------


def test_team_create_show_list(cli: Cli, layout: Layout) -> None:
    assert ok(cli, "team", "list").out == ""
    assert ok(cli, "team", "list", "--json").json() == []

    assert ok(cli, "team", "create", "My Team", "-d", "first team").out == "my-team\n"
    created = ok(cli, "team", "create", "My Team", "--json").json()
    assert created["name"] == "my-team-2"
    assert created["leadAgentId"] == "team-lead@my-team-2"
    assert [m["name"] for m in created["members"]] == ["team-lead"]
    assert created == json.loads(layout.config_file("my-team-2").read_bytes())

    shown = ok(cli, "team", "show", "my-team").out.splitlines()
    assert shown[0] == "team my-team — first team"
    assert len(shown) == 2
    assert shown[1].split()[0] == "team-lead"
    assert "lead" in shown[1].split()
    as_json = ok(cli, "team", "show", "My Team", "--json").json()
    assert as_json == json.loads(layout.config_file("my-team").read_bytes())
    assert as_json["description"] == "first team"

    assert ok(cli, "team", "list").out.splitlines() == [
        "my-team\t1 member(s)\tfirst team",
        "my-team-2\t1 member(s)",
    ]
    listed = ok(cli, "team", "list", "--json").json()
    assert [t["name"] for t in listed] == ["my-team", "my-team-2"]


def test_team_list_and_show_report_a_corrupt_config(cli: Cli, layout: Layout, team: str) -> None:
    TeamStore(layout).create("good")
    config = layout.config_file(team)
    config.write_bytes(b'{"name": "t", ')
    lines = ok(cli, "team", "list").out.splitlines()
    assert lines[0] == "good\t1 member(s)"
    assert lines[1].startswith("(unreadable) ")
    assert str(config) in lines[1]
    listed = ok(cli, "team", "list", "--json").json()
    assert listed[0]["name"] == "good"
    assert set(listed[1]) == {"error"}
    assert "not valid JSON" in listed[1]["error"]

    line = error(cli, "team", "show", team)
    assert str(config) in line
    assert "not valid JSON" in line
    assert config.read_bytes() == b'{"name": "t", '


def test_a_folder_no_team_name_maps_to_is_listed_as_such_and_left_alone(cli: Cli, layout: Layout) -> None:
    TeamStore(layout).create("good")
    odd = layout.teams_dir / "Odd Name"
    odd.mkdir()
    (odd / "config.json").write_bytes(layout.config_file("good").read_bytes())
    lines = ok(cli, "team", "list").out.splitlines()
    assert lines == [f"(unreadable) {odd}: not a team's folder (a team of that name lives in odd-name/); left alone",
                     "good\t1 member(s)"]  # fmt: skip
    assert ok(cli, "status", "--json").json()[1]["name"] == "good"
    assert (odd / "config.json").exists()


def test_team_delete_refuses_with_members_then_force_removes_everything(cli: Cli, layout: Layout, team: str) -> None:
    TaskStore(layout).create(team, "leftover")
    team_dir, task_dir = layout.team_dir(team), layout.task_dir(team)
    assert team_dir.is_dir()
    assert task_dir.is_dir()

    line = error(cli, "team", "delete", team)
    assert "alice, bob" in line
    assert "--force" in line
    assert team_dir.is_dir()
    assert (task_dir / "1.json").is_file()

    assert ok(cli, "team", "delete", team, "--force").out == f"deleted {team}\n"
    assert not team_dir.exists()
    assert not task_dir.exists()
    assert "no team named 't'" in error(cli, "team", "show", team)


def test_team_delete_without_teammates_needs_no_force(cli: Cli, layout: Layout) -> None:
    assert ok(cli, "team", "create", "solo").out == "solo\n"
    assert ok(cli, "team", "delete", "solo").out == "deleted solo\n"
    assert not layout.team_dir("solo").exists()
    assert not layout.task_dir("solo").exists()
    assert ok(cli, "team", "list", "--json").json() == []


# -- tasks -------------------------------------------------------------------------------------------


def test_task_create_list_get_update_delete(cli: Cli, layout: Layout, team: str) -> None:
    assert ok(cli, "task", "create", team, "Write code", "-d", "the code").out == "1\n"
    second = ok(cli, "task", "create", team, "Test it", "--blocked-by", "1", "--json").json()
    assert second == {
        "id": "2",
        "subject": "Test it",
        "description": "",
        "status": "pending",
        "blocks": [],
        "blockedBy": ["1"],
    }
    assert list(second) == ["id", "subject", "description", "status", "blocks", "blockedBy"]

    assert ok(cli, "task", "list", team).out.splitlines() == [
        "#1 [pending] Write code",
        "#2 [pending] Test it [blocked by #1]",
    ]
    listed = ok(cli, "task", "list", team, "--json").json()
    assert [t["id"] for t in listed] == ["1", "2"]
    assert listed[0]["blocks"] == ["2"]

    assert ok(cli, "task", "get", team, "2").out == "Task #2: Test it\nStatus: pending\nBlocked by: #1\n"
    assert ok(cli, "task", "get", team, "1").out.splitlines() == [
        "Task #1: Write code",
        "Status: pending",
        "Description: the code",
        "Blocks: #2",
    ]
    got = ok(cli, "task", "get", team, "1", "--json").json()
    assert got == json.loads(layout.task_file(team, "1").read_bytes())

    assert ok(cli, "task", "update", team, "1", "--status", "in_progress").out == "Updated task #1 status\n"
    assert ok(cli, "task", "update", team, "1", "--status", "in_progress").out == "Task #1 unchanged\n"
    updated = ok(cli, "task", "update", team, "1", "--subject", "Write more", "--json").json()
    assert updated["updated"] == ["subject"]
    assert updated["subject"] == "Write more"
    assert updated["status"] == "in_progress"

    assert ok(cli, "task", "delete", team, "2").out == "deleted task #2\n"
    assert "task #2 not found" in error(cli, "task", "get", team, "2")
    assert ok(cli, "task", "get", team, "1", "--json").json()["blocks"] == []
    assert ok(cli, "task", "create", team, "Again").out == "3\n"  # 2 is never reused

    out = ok(cli, "task", "update", team, "3", "--add-blocked-by", "1").out
    assert out == "Updated task #3 blockedBy\n"
    assert "cycle" in error(cli, "task", "update", team, "1", "--add-blocked-by", "3")
    assert ok(cli, "task", "get", team, "1", "--json").json()["blockedBy"] == []

    assert ok(cli, "task", "update", team, "3", "--status", "deleted").out == "Updated task #3 status\n"
    assert not layout.task_file(team, "3").exists()
    assert [t["id"] for t in ok(cli, "task", "list", team, "--json").json()] == ["1"]


def test_task_claim_prints_the_id_or_the_reason(cli: Cli, team: str) -> None:
    ok(cli, "task", "create", team, "first")
    ok(cli, "task", "create", team, "second", "--blocked-by", "1")

    blocked = run(cli, "task", "claim", team, "2", "--agent", "bob")
    assert one_line_failure(blocked) == "blocked"
    assert blocked.out == ""

    assert ok(cli, "task", "claim", team, "--agent", "bob").out == "1\n"
    assert one_line_failure(run(cli, "task", "claim", team, "1", "--agent", "carol")) == "already_claimed"
    as_json = run(cli, "task", "claim", team, "1", "--agent", "carol", "--json")
    assert as_json.code == 1
    assert as_json.err == ""
    assert as_json.json() == {
        "success": False,
        "taskId": "1",
        "reason": "already_claimed",
        "busyWith": [],
    }
    assert one_line_failure(run(cli, "task", "claim", team, "99", "--agent", "carol")) == "task_not_found"

    ok(cli, "task", "update", team, "1", "--status", "completed")
    assert one_line_failure(run(cli, "task", "claim", team, "1", "--agent", "bob")) == "already_resolved"
    claimed = ok(cli, "task", "claim", team, "--agent", "carol", "--json").json()
    assert claimed == {"success": True, "taskId": "2", "reason": None, "busyWith": []}
    task = ok(cli, "task", "get", team, "2", "--json").json()
    assert (task["owner"], task["status"]) == ("carol", "in_progress")

    ok(cli, "task", "create", team, "third")
    busy = run(cli, "task", "claim", team, "3", "--agent", "carol", "--check-busy", "--json")
    assert busy.code == 1
    assert busy.json()["reason"] == "agent_busy"
    assert busy.json()["busyWith"] == ["2"]
    assert ok(cli, "task", "claim", team, "--agent", "dave", "--check-busy").out == "3\n"
    assert one_line_failure(run(cli, "task", "claim", team, "--agent", "erin")) == "task_not_found"


def test_task_update_owner_sends_task_assignment(cli: Cli, layout: Layout, team: str) -> None:
    ok(cli, "task", "create", team, "Review", "-d", "look at it")
    assert ok(cli, "task", "update", team, "1", "--owner", "alice").out == "Updated task #1 owner\n"

    inbox = inbox_json(layout, team, "alice")
    assert len(inbox) == 1
    assert inbox[0]["from"] == "team-lead"
    assert inbox[0]["read"] is False
    text = inbox[0]["text"]
    message = json.loads(text)
    assert text == dump_compact(message)  # compact JSON, as JSON.stringify writes it
    assert list(message) == ["type", "taskId", "subject", "description", "assignedBy", "timestamp"]
    assert message["type"] == "task_assignment"
    assert (message["taskId"], message["subject"], message["description"], message["assignedBy"]) == (
        "1",
        "Review",
        "look at it",
        "team-lead",
    )
    shown = ok(cli, "msg", "read", team, "alice").out
    assert f"[task_assignment] {text}" in shown

    # an owner who is not a member gets no message and no phantom inbox
    assert ok(cli, "task", "update", team, "1", "--owner", "zed").out == "Updated task #1 owner\n"
    assert not layout.inbox_file(team, "zed").exists()
    cleared = ok(cli, "task", "update", team, "1", "--owner", "", "--json").json()
    assert "owner" not in cleared
    assert cleared["updated"] == ["owner"]
    assert len(inbox_json(layout, team, "alice")) == 1


def test_tasks_of_a_list_without_a_team_are_still_reachable(cli: Cli, layout: Layout) -> None:
    # a task list can outlive its team (the real CLI keeps tasks/<team>/ and uses tasks/<session id>/)
    TaskStore(layout).create("session-59a7c56e", "orphan")
    assert ok(cli, "task", "list", "session-59a7c56e").out == "#1 [pending] orphan\n"
    assert ok(cli, "task", "create", "session-59a7c56e", "more").out == "2\n"
    assert ok(cli, "task", "claim", "session-59a7c56e", "--agent", "a").out == "1\n"


# -- messages ----------------------------------------------------------------------------------------


def test_msg_send_read_and_mark_read(cli: Cli, layout: Layout, team: str) -> None:
    first = ok(cli, "msg", "send", team, "alice", "hello there", "--summary", "greet").out.strip()
    assert UUID_RE.match(first), first
    second = ok(cli, "msg", "send", team, "alice", "two\nlines", "--from", "bob", "--json").json()
    assert list(second) == ["from", "text", "timestamp", "color", "msgV", "msg_id", "type", "read"]
    assert (second["from"], second["text"], second["read"], second["color"]) == ("bob", "two\nlines", False, "green")

    on_disk = inbox_json(layout, team, "alice")
    assert [e["msg_id"] for e in on_disk] == [first, second["msg_id"]]
    assert ok(cli, "msg", "read", team, "alice", "--json").json() == on_disk

    text = ok(cli, "msg", "read", team, "alice").out.splitlines()
    assert text == [
        f"{on_disk[0]['timestamp']} team-lead — greet",
        "  hello there",
        f"{on_disk[1]['timestamp']} bob",
        "  two",
        "  lines",
    ]

    marked = ok(cli, "msg", "read", team, "alice", "--unread", "--mark-read", "--json").json()
    assert [e["msg_id"] for e in marked] == [first, second["msg_id"]]
    assert [e["read"] for e in inbox_json(layout, team, "alice")] == [True, True]
    assert ok(cli, "msg", "read", team, "alice", "--unread", "--json").json() == []
    assert ok(cli, "msg", "read", team, "alice", "--unread").out == ""
    assert ok(cli, "msg", "read", team, "alice").out.splitlines()[0].endswith(" (read)")

    third = ok(cli, "msg", "send", team, "alice", "three").out.strip()
    unread = ok(cli, "msg", "read", team, "alice", "--unread", "--json").json()
    assert [e["msg_id"] for e in unread] == [third]

    assert ok(cli, "msg", "read", team, "bob", "--json").json() == []
    assert not layout.inbox_file(team, "bob").exists()


def test_msg_broadcast(cli: Cli, layout: Layout, team: str) -> None:
    assert ok(cli, "msg", "broadcast", team, "all hands").out == "alice bob\n"
    assert ok(cli, "msg", "broadcast", team, "from alice", "--from", "alice", "--json").json() == [
        "team-lead",
        "bob",
    ]
    assert [e["text"] for e in inbox_json(layout, team, "alice")] == ["all hands"]
    assert [e["text"] for e in inbox_json(layout, team, "bob")] == ["all hands", "from alice"]
    assert [e["text"] for e in inbox_json(layout, team, "team-lead")] == ["from alice"]


def test_msg_read_all_includes_archived_history(cli: Cli, layout: Layout, team: str) -> None:
    box = Mailbox(layout)
    total = KEEP_DELIVERED + 5
    for i in range(total):
        box.send(team, "alice", f"m{i}", sender="team-lead")
    marked = ok(cli, "msg", "read", team, "alice", "--mark-read", "--json").json()
    assert len(marked) == total

    history = layout.history_file(team, "alice")
    archived = [json.loads(line)["text"] for line in history.read_text().splitlines()]
    assert archived == [f"m{i}" for i in range(5)]
    live = inbox_json(layout, team, "alice")
    assert [e["text"] for e in live] == [f"m{i}" for i in range(5, total)]

    assert len(ok(cli, "msg", "read", team, "alice", "--json").json()) == KEEP_DELIVERED
    every = ok(cli, "msg", "read", team, "alice", "--all", "--json").json()
    assert [e["text"] for e in every] == [f"m{i}" for i in range(total)]
    assert all(e["read"] is True for e in every)
    text = ok(cli, "msg", "read", team, "alice", "--all").out
    assert text.count(" (read)\n") == total
    assert ok(cli, "msg", "read", team, "alice", "--all", "--unread", "--json").json() == []


def test_msg_send_to_a_non_member_is_refused(cli: Cli, layout: Layout, team: str) -> None:
    line = error(cli, "msg", "send", team, "mallory", "hi")
    assert "'mallory' is not a member of team 't'" in line
    assert not layout.inbox_file(team, "mallory").exists()
    assert sorted(p.name for p in layout.inbox_dir(team).iterdir()) == []


# -- warnings from corrupt files -------------------------------------------------------------------


def test_corrupt_files_give_one_warning_line_and_the_command_goes_on(cli: Cli, layout: Layout, team: str) -> None:
    store = TaskStore(layout)
    for subject in ("a", "b", "c"):
        store.create(team, subject)
    layout.task_file(team, "2").write_bytes(b"{oops")
    listed = run(cli, "task", "list", team)
    assert listed.code == 0
    assert listed.out.splitlines() == ["#1 [pending] a", "#3 [pending] c"]
    warnings = listed.err.splitlines()
    assert len(warnings) == 1
    assert warnings[0].startswith("agentteams: warning: ")
    assert "2.json.corrupt-" in warnings[0]
    assert ok(cli, "task", "create", team, "d").out == "4\n"

    layout.inbox_file(team, "alice").write_bytes(b"not json at all")
    read = run(cli, "msg", "read", team, "alice", "--json")
    assert read.code == 0
    assert read.json() == []
    warnings = read.err.splitlines()
    assert len(warnings) == 1
    assert warnings[0].startswith("agentteams: warning: ")
    assert "alice.json.corrupt-" in warnings[0]
    ok(cli, "msg", "send", team, "alice", "after")
    assert [e["text"] for e in ok(cli, "msg", "read", team, "alice", "--json").json()] == ["after"]


# -- errors: one line on stderr, exit 1, never a traceback -----------------------------------------

ERRORS: list[tuple[tuple[str, ...], str]] = [
    # a missing team
    (("team", "show", "nope"), "no team named 'nope'"),
    (("team", "delete", "nope"), "no team named 'nope'"),
    (("team", "delete", "nope", "--force"), "no team named 'nope'"),
    (("task", "create", "nope", "s"), "no team or task list named 'nope'"),
    (("task", "list", "nope"), "no team or task list named 'nope'"),
    (("task", "list", "nope", "--json"), "no team or task list named 'nope'"),
    (("task", "get", "nope", "1"), "no team or task list named 'nope'"),
    (("task", "update", "nope", "1", "--status", "completed"), "no team or task list named 'nope'"),
    (("task", "claim", "nope", "1", "--agent", "a"), "no team or task list named 'nope'"),
    (("task", "claim", "nope", "--agent", "a"), "no team or task list named 'nope'"),
    (("task", "delete", "nope", "1"), "no team or task list named 'nope'"),
    (("msg", "send", "nope", "alice", "hi"), "no team named 'nope'"),
    (("msg", "broadcast", "nope", "hi"), "no team named 'nope'"),
    (("msg", "read", "nope", "alice"), "no team named 'nope'"),
    (("msg", "read", "nope", "alice", "--all", "--json"), "no team named 'nope'"),
    # bad names
    (("team", "create", ""), "team name is empty"),
    (("team", "create", "   "), "team name is empty"),
    (("team", "create", ".."), "needs at least one ASCII letter or digit"),
    (("team", "create", "@@@"), "needs at least one ASCII letter or digit"),
    (("team", "create", "x" * 300), "longer than 128 characters"),
    (("team", "show", "../../etc"), "no team named '../../etc'"),
    (("msg", "read", "t", ".."), "agent name '..' needs at least one ASCII letter or digit"),
    (("msg", "send", "t", "", "hi"), "is not a member"),
    # bad task input
    (("task", "get", "t", "abc"), "task id must be a positive whole number, got 'abc'"),
    (("task", "get", "t", "../1"), "task id must be a positive whole number"),
    (("task", "get", "t", "7"), "task #7 not found"),
    (("task", "get", "t", "7", "--json"), "task #7 not found"),
    (("task", "create", "t", "   "), "a task needs a subject"),
    (("task", "create", "t", "s", "--blocked-by", "9"), "task #9 not found"),
    (("task", "update", "t", "7", "--status", "completed"), "task #7 not found"),
    (("task", "update", "t", "1", "--status", "bogus"), "status must be one of"),
    (("task", "delete", "t", "5"), "task #5 not found"),
    # messages
    (("msg", "send", "t", "mallory", "hi"), "'mallory' is not a member"),
    # usage errors
    (("bogus",), "no Anthropic API key"),  # a first word that is no command is a prompt for the interactive lead
    (("--agent-name", "x", "--team-name", "nope"), "no team named 'nope'"),  # a teammate of a missing team
    (("--agent-id", "x"), "needs --agent-name and --team-name"),
    (("-p", "hi", "--teammate-mode", "screen"), "--teammate-mode must be one of"),
    (("team", "create"), "Missing argument"),
    (("task", "claim", "t", "1"), "Missing option '--agent'"),
    (("task", "list", "t", "--bogus"), "No such option: --bogus"),
    (("msg", "send", "t", "alice"), "Missing argument"),
]


@pytest.mark.parametrize(("args", "fragment"), ERRORS, ids=[" ".join(a)[:40] for a, _ in ERRORS])
def test_errors_are_one_line_and_exit_1(
    cli: Cli, config_root: Path, layout: Layout, team: str, args: tuple[str, ...], fragment: str
) -> None:
    before = sorted(str(p.relative_to(config_root)) for p in config_root.rglob("*") if ".flock" not in p.name)
    line = error(cli, *args)
    assert fragment in line
    after = sorted(str(p.relative_to(config_root)) for p in config_root.rglob("*") if ".flock" not in p.name)
    assert after == before  # a failed command leaves nothing behind
    assert not (config_root / "teams" / "nope").exists()
    assert not (config_root / "tasks" / "nope").exists()


def test_names_are_sanitised_inside_the_root(cli: Cli, config_root: Path, layout: Layout) -> None:
    outside = sorted(p.name for p in config_root.parent.iterdir())
    assert ok(cli, "team", "create", "../x").out == "---x\n"
    assert ok(cli, "team", "create", "/etc/passwd").out == "-etc-passwd\n"
    assert layout.config_file("---x").is_file()
    assert ok(cli, "team", "show", "../x", "--json").json()["name"] == "---x"
    assert ok(cli, "msg", "read", "../x", "../../y", "--json").json() == []
    assert sorted(p.name for p in config_root.parent.iterdir()) == outside
    assert sorted(p.name for p in (config_root / "teams").iterdir()) == ["---x", "-etc-passwd"]
