"""Byte compatibility with what the real Claude Code 2.1.332 wrote (tests/golden-2.1.332, copied verbatim from
shared/interop): every file reads and dumps back identical, its lead's signatures verify, and our stores keep a
2.1.332 team's shape, a member without `prompt` included (REPORT-2.1.332 §1.1)."""

from __future__ import annotations

import json
import shlex
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
from tests.support import ccversions as ccv
from tests.support.repo import TESTS
from tests.support.schema330 import inbox_faults

GOLDEN = TESTS / "golden-2.1.332"
TEAM = "session-0a78a1ac"
LEAD_PROCESS = {"pid": 10861, "pidSpace": "vm#pid:[4026531836]", "claimedAt": 1795878943209, "procStart": "226137"}
LEAD_INBOX = ("inbox_carol_prompt_signed.json", "inbox_carol_task_assignment_signed.json",
              "inbox_carol_message_with_summary_signed.json", "inbox_carol_shutdown_request_signed.json")  # fmt: skip


def golden(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


def golden_files() -> list[Path]:
    files = sorted(GOLDEN.glob("*.json"))
    assert len(files) >= 16, f"golden files missing under {GOLDEN}"
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
        task.schema_order = False  # as the task store writes for a team of 2.1.330 on
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


def test_the_lead_no_longer_records_the_prompt_and_a_teammate_keeps_one_written_by_another() -> None:
    for name in ("team_config_teammate_reserved.json", "team_config_teammate_spawned.json"):
        [_, carol] = json.loads(golden(name))["members"]
        assert "prompt" not in carol and TeamConfig.from_json(json.loads(golden(name))).members[1].prompt is None
    [_, bob] = json.loads(golden("team_config_teammate_isActive_true.json"))["members"]
    assert isinstance(bob.get("prompt"), str)


def test_every_lead_message_verifies_under_the_key_of_the_teammates_argv() -> None:
    argv = golden("teammate_argv_from_real_lead.txt").split()
    key = argv[argv.index("--lead-verify-key") + 1]
    for name in LEAD_INBOX:
        [entry] = json.loads(golden(name))
        assert ccv.lead_sig_valid(entry, key), name
        assert ccv.lead_sig_valid(Envelope.from_json(entry, name).to_json(), key), name  # kept through our record


def test_the_spawn_command_sets_the_empty_variables_the_traits_name() -> None:
    words = shlex.split(golden("teammate_spawn_command_from_real_lead.txt"))
    empty = [w.split("=", 1)[0] for w in words if w.endswith("=") and w.count("=") == 1]
    assert sorted(empty) == sorted(ccv.TRAITS["2.1.332"].empty_env)


def test_the_idle_notification_result_is_read() -> None:
    [env] = envelopes(golden("inbox_lead_idle_notification_from_real_teammate.json"))
    msg = parse_message(env.text)
    assert isinstance(msg, IdleNotification) and msg.result == "bob: hi"


# -- our store operations on a copy of a 2.1.332 team ------------------------------------------------


@pytest.fixture
def team332(layout: Layout) -> Layout:
    """The team of the real lead's run: reserved carol (no `prompt`), carol's signed prompt, task #1."""
    layout.team_dir(TEAM).mkdir(parents=True)
    layout.inbox_dir(TEAM).mkdir()
    shutil.copyfile(GOLDEN / "team_config_teammate_reserved.json", layout.config_file(TEAM))
    shutil.copyfile(GOLDEN / "inbox_carol_prompt_signed.json", layout.inbox_file(TEAM, "carol"))
    layout.task_dir(TEAM).mkdir(parents=True)
    layout.task_lock_target(TEAM).write_bytes(b"")
    shutil.copyfile(GOLDEN / "task_1_created.json", layout.task_file(TEAM, "1"))
    return layout


def config_on_disk(layout: Layout) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(layout.config_file(TEAM).read_text(encoding="utf-8"))
    assert data["leadProcess"] == LEAD_PROCESS
    assert list(data)[:6] == ["name", "createdAt", "leadAgentId", "leadSessionId", "leadProcess", "members"]
    return data


def test_member_changes_reproduce_what_2_1_332_wrote(team332: Layout) -> None:
    teams = TeamStore(team332)
    path = team332.config_file(TEAM)
    teams.set_member_fields(TEAM, "carol", tmux_pane_id="%1", backend_type="tmux")
    assert path.read_text(encoding="utf-8") == golden("team_config_teammate_spawned.json")

    teams.set_active(TEAM, "carol", True)
    data = config_on_disk(team332)
    assert list(data["members"][1])[-2:] == ["backendType", "isActive"]  # appended, as the CLI's toggle does
    assert "prompt" not in data["members"][1]

    dave = teams.add_member(TEAM, NewMember(name="dave", cwd="/home/user/proj"))
    assert config_on_disk(team332)["members"][2]["agentId"] == dave.agent_id
    teams.remove_member(TEAM, "dave")
    teams.set_active(TEAM, "carol", False)
    teams.remove_member(TEAM, "carol")
    assert path.read_text(encoding="utf-8") == golden("team_config_after_shutdown.json")
    assert teams.read(TEAM).lead_process == LeadProcess.from_json(LEAD_PROCESS)


def test_mail_into_a_2_1_332_inbox_keeps_it_valid(team332: Layout) -> None:
    TeamStore(team332).set_member_fields(TEAM, "carol", tmux_pane_id="%1", backend_type="tmux")
    box = Mailbox(team332)
    inbox = team332.inbox_file(TEAM, "carol")
    before = inbox.read_bytes()

    box.send(TEAM, "carol", "CAROL-PING again", sender="team-lead", summary="ping")
    assert inbox.read_bytes().startswith(before.removesuffix(b"\n]"))  # the CLI's element untouched, byte for byte
    assert inbox_faults(inbox) == []

    unread = box.unread(TEAM, "carol")
    assert len(unread) == 2
    assert box.mark_delivered(TEAM, "carol", unread[:1]) == 1
    delivered = json.loads(inbox.read_text(encoding="utf-8"))
    [signed] = json.loads(golden("inbox_carol_prompt_signed.json"))
    assert delivered[0] == {**signed, "read": True}  # lead_sig and every key kept, in place
    assert [e["read"] for e in delivered] == [True, False]
    assert inbox_faults(inbox) == []


def test_task_changes_reproduce_what_2_1_332_wrote(team332: Layout) -> None:
    tasks = TaskStore(team332)
    path = team332.task_file(TEAM, "1")

    result = tasks.update(TEAM, "1", owner="carol")
    assert result.updated == ["owner"] and result.assignment_sent
    assert path.read_text(encoding="utf-8") == golden("task_1_owner_set.json")
    inbox = team332.inbox_file(TEAM, "carol")
    assignment = parse_message(json.loads(inbox.read_text(encoding="utf-8"))[-1]["text"])
    assert isinstance(assignment, TaskAssignment) and assignment.task_id == "1"
    [real] = json.loads(golden("inbox_carol_task_assignment_signed.json"))
    assert list(json.loads(json.loads(inbox.read_text("utf-8"))[-1]["text"])) == list(json.loads(real["text"]))
    assert inbox_faults(inbox) == []

    assert [t.id for t in tasks.unassign_all(TEAM, "carol", f"carol@{TEAM}").tasks] == ["1"]
    assert path.read_text(encoding="utf-8") == golden("task_1_after_unassign.json")
    assert config_on_disk(team332)
