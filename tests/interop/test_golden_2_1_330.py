"""Byte compatibility with what the real Claude Code 2.1.330 wrote (tests/golden-2.1.330, copied verbatim from
shared/interop): every file reads and dumps back identical, and our stores keep a 2.1.330 team's shape."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentteams.pids import LeadProcess
from agentteams.store.file.inbox_file import append_to_array
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import dump_compact, dump_json
from agentteams.store.paths import Layout
from agentteams.store.protocol import IdleNotification, TaskAssignment, UnknownMessage, parse_message
from agentteams.store.records import Envelope, Task, TeamConfig
from tests.support.repo import TESTS
from tests.support.schema330 import inbox_faults

GOLDEN = TESTS / "golden-2.1.330"
TEAM = "session-3d7f09ec"
LEAD_PROCESS = {"pid": 25734, "pidSpace": "vm#pid:[4026531836]", "claimedAt": 1795433868257, "procStart": "148847"}


def golden(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


def golden_files() -> list[Path]:
    files = sorted(GOLDEN.glob("*.json"))
    assert len(files) >= 15, f"golden files missing under {GOLDEN}"
    return files


def envelopes(raw: str) -> list[Envelope]:
    return [Envelope.from_json(e, f"[{i}]") for i, e in enumerate(json.loads(raw))]


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: p.name)
def test_golden_round_trips_byte_identical(path: Path) -> None:
    raw = path.read_text(encoding="utf-8")
    data = json.loads(raw)
    if path.name.startswith("team_config"):
        config = TeamConfig.from_json(data)
        assert config.lead_process == LeadProcess.from_json(data.get("leadProcess"))
        out = dump_json(config.to_json())
    elif path.name.startswith("task_"):
        task = Task.from_json(data)
        task.schema_order = False  # as the task store writes for a 2.1.330 team
        out = dump_json(task.to_json())
    elif path.name.startswith("inbox_"):
        envs = envelopes(raw)
        out = dump_json([e.to_json() for e in envs])
        assert append_to_array(b"[]", envs) == raw.encode()  # the sender's byte-level append, too
        for env in envs:
            msg = parse_message(env.text)
            if env.text.startswith("{"):
                assert msg is not None and not isinstance(msg, UnknownMessage), env.text
                assert msg.to_text() == env.text
        assert inbox_faults(path) == []
    else:
        assert path.name.startswith("sessions_")
        out = dump_compact(data)  # not ours to write: plain JSON, as node writes it
    assert out == raw
    assert not raw.endswith("\n")


def test_the_idle_notification_result_is_read() -> None:
    [env] = envelopes(golden("inbox_lead_idle_notification_from_real_teammate.json"))
    msg = parse_message(env.text)
    assert isinstance(msg, IdleNotification) and msg.result == "bob: hi"


def test_a_2_1_197_task_order_would_not_reproduce_2_1_330() -> None:
    # the generation matters: schema order puts a later owner before status, where 2.1.330 appends it
    task = Task.from_json(json.loads(golden("task_1_owner_set.json")))
    assert dump_json(task.to_json()) != golden("task_1_owner_set.json")


# -- our store operations on a copy of a 2.1.330 team ------------------------------------------------


@pytest.fixture
def team330(layout: Layout) -> Layout:
    """The team of lead run C, reserved carol, carol's inbox with three signed lead messages, task #1."""
    layout.team_dir(TEAM).mkdir(parents=True)
    layout.inbox_dir(TEAM).mkdir()
    shutil.copyfile(GOLDEN / "team_config_teammate_reserved.json", layout.config_file(TEAM))
    shutil.copyfile(GOLDEN / "inbox_carol_prompt_task_assignment_message_signed.json", layout.inbox_file(TEAM, "carol"))
    layout.task_dir(TEAM).mkdir(parents=True)
    layout.task_lock_target(TEAM).write_bytes(b"")
    shutil.copyfile(GOLDEN / "task_1_created.json", layout.task_file(TEAM, "1"))
    return layout


def config_on_disk(layout: Layout) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(layout.config_file(TEAM).read_text(encoding="utf-8"))
    assert data["leadProcess"] == LEAD_PROCESS
    assert list(data)[:6] == ["name", "createdAt", "leadAgentId", "leadSessionId", "leadProcess", "members"]
    return data


def test_member_changes_reproduce_what_2_1_330_wrote(team330: Layout) -> None:
    teams = TeamStore(team330)
    path = team330.config_file(TEAM)
    teams.set_member_fields(TEAM, "carol", tmux_pane_id="%1", backend_type="tmux")
    assert path.read_text(encoding="utf-8") == golden("team_config_teammate_spawned.json")

    teams.set_active(TEAM, "carol", True)
    data = config_on_disk(team330)
    assert list(data["members"][1])[-2:] == ["backendType", "isActive"]  # appended, as the CLI's toggle does

    dave = teams.add_member(TEAM, NewMember(name="dave", cwd="/home/user/proj"))
    assert config_on_disk(team330)["members"][2]["agentId"] == dave.agent_id
    teams.remove_member(TEAM, "dave")
    teams.set_active(TEAM, "carol", False)
    teams.remove_member(TEAM, "carol")
    assert path.read_text(encoding="utf-8") == golden("team_config_after_shutdown.json")
    assert teams.read(TEAM).lead_process == LeadProcess.from_json(LEAD_PROCESS)


def test_mail_into_a_2_1_330_inbox_keeps_it_valid_to_2_1_330(team330: Layout) -> None:
    TeamStore(team330).set_member_fields(TEAM, "carol", tmux_pane_id="%1", backend_type="tmux")
    box = Mailbox(team330)
    inbox = team330.inbox_file(TEAM, "carol")
    before = inbox.read_bytes()

    box.send(TEAM, "carol", "CAROL-PING again", sender="team-lead", summary="ping")
    after = inbox.read_bytes()
    assert after.startswith(before.removesuffix(b"\n]"))  # the CLI's elements untouched, byte for byte
    assert inbox_faults(inbox) == []

    box.send(TEAM, "team-lead", "carol reporting", sender="carol")
    [to_lead] = json.loads(team330.inbox_file(TEAM, "team-lead").read_text())
    assert to_lead["color"] == "blue" and inbox_faults(team330.inbox_file(TEAM, "team-lead")) == []

    unread = box.unread(TEAM, "carol")
    assert len(unread) == 4
    assert box.mark_delivered(TEAM, "carol", unread[:3]) == 3
    delivered = json.loads(inbox.read_text(encoding="utf-8"))
    signed = json.loads(golden("inbox_carol_prompt_task_assignment_message_signed.json"))
    assert delivered[:3] == [{**e, "read": True} for e in signed]  # lead_sig and every key kept, in place
    assert [e["read"] for e in delivered] == [True, True, True, False]
    assert inbox_faults(inbox) == []
    assert config_on_disk(team330)


def test_task_changes_reproduce_what_2_1_330_wrote(team330: Layout) -> None:
    tasks = TaskStore(team330)
    path = team330.task_file(TEAM, "1")

    result = tasks.update(TEAM, "1", owner="carol")
    assert result.updated == ["owner"] and result.assignment_sent
    assert path.read_text(encoding="utf-8") == golden("task_1_owner_set.json")
    inbox = team330.inbox_file(TEAM, "carol")
    assignment = parse_message(json.loads(inbox.read_text(encoding="utf-8"))[-1]["text"])
    assert isinstance(assignment, TaskAssignment) and assignment.task_id == "1"
    assert inbox_faults(inbox) == []

    assert [t.id for t in tasks.unassign_all(TEAM, "carol", f"carol@{TEAM}").tasks] == ["1"]
    assert path.read_text(encoding="utf-8") == golden("task_1_after_unassign.json")

    created = tasks.create(TEAM, "Write parser", "Implement the parser module", active_form="Writing parser")
    assert team330.task_file(TEAM, created.id).read_text(encoding="utf-8") == golden("task_1_created.json").replace(
        '"id": "1"', f'"id": "{created.id}"'
    )
    assert config_on_disk(team330)
