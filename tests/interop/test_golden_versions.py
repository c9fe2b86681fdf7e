"""Byte compatibility with what the real Claude Code 2.1.330 and 2.1.332 wrote (tests/golden-<version>, copied
verbatim from shared/interop): every file reads and dumps back identical, a 2.1.332 lead's signatures verify, and
our stores keep each version's team shape, 2.1.332's member without `prompt` included (REPORT-2.1.332 §1.1)."""

from __future__ import annotations

import json
import shlex
import shutil
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Golden:
    """One version's golden files and the facts of the team they were written by."""

    version: str
    team: str
    lead_process: dict[str, Any]
    least_files: int  # how many JSON files the copy holds at the least
    carol_inbox: str  # carol's inbox as the real lead left it: its signed messages

    @property
    def dir(self) -> Path:
        return TESTS / f"golden-{self.version}"

    def text(self, name: str) -> str:
        return (self.dir / name).read_text(encoding="utf-8")

    def json_files(self) -> list[Path]:
        files = sorted(self.dir.glob("*.json"))
        assert len(files) >= self.least_files, f"golden files missing under {self.dir}"
        return files


GOLDEN_330 = Golden(
    "2.1.330", "session-3d7f09ec",
    {"pid": 25734, "pidSpace": "vm#pid:[4026531836]", "claimedAt": 1795433868257, "procStart": "148847"},
    15, "inbox_carol_prompt_task_assignment_message_signed.json",
)  # fmt: skip
GOLDEN_332 = Golden(
    "2.1.332", "session-0a78a1ac",
    {"pid": 10861, "pidSpace": "vm#pid:[4026531836]", "claimedAt": 1795878943209, "procStart": "226137"},
    16, "inbox_carol_prompt_signed.json",
)  # fmt: skip
GOLDENS = (GOLDEN_330, GOLDEN_332)
LEAD_INBOX_332 = (
    "inbox_carol_prompt_signed.json", "inbox_carol_task_assignment_signed.json",
    "inbox_carol_message_with_summary_signed.json", "inbox_carol_shutdown_request_signed.json",
)  # fmt: skip


@pytest.fixture(params=GOLDENS, ids=[g.version for g in GOLDENS])
def golden(request: pytest.FixtureRequest) -> Golden:
    """Each version's golden files in turn."""
    g: Golden = request.param
    return g


def envelopes(raw: str) -> list[Envelope]:
    return [Envelope.from_json(e, f"[{i}]") for i, e in enumerate(json.loads(raw))]


GOLDEN_FILES = [p for g in GOLDENS for p in g.json_files()]


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: f"{p.parent.name.removeprefix('golden-')}/{p.name}")
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


def test_the_idle_notification_result_is_read(golden: Golden) -> None:
    [env] = envelopes(golden.text("inbox_lead_idle_notification_from_real_teammate.json"))
    msg = parse_message(env.text)
    assert isinstance(msg, IdleNotification) and msg.result == "bob: hi"


def test_a_2_1_197_task_order_would_not_reproduce_2_1_330() -> None:
    # the generation matters: schema order puts a later owner before status, where 2.1.330 appends it
    task = Task.from_json(json.loads(GOLDEN_330.text("task_1_owner_set.json")))
    assert dump_json(task.to_json()) != GOLDEN_330.text("task_1_owner_set.json")


def test_the_lead_no_longer_records_the_prompt_and_a_teammate_keeps_one_written_by_another() -> None:
    for name in ("team_config_teammate_reserved.json", "team_config_teammate_spawned.json"):
        data = json.loads(GOLDEN_332.text(name))
        assert "prompt" not in data["members"][1] and TeamConfig.from_json(data).members[1].prompt is None
    [_, bob] = json.loads(GOLDEN_332.text("team_config_teammate_isActive_true.json"))["members"]
    assert isinstance(bob.get("prompt"), str)


def test_every_lead_message_verifies_under_the_key_of_the_teammates_argv() -> None:
    argv = GOLDEN_332.text("teammate_argv_from_real_lead.txt").split()
    key = argv[argv.index("--lead-verify-key") + 1]
    for name in LEAD_INBOX_332:
        [entry] = json.loads(GOLDEN_332.text(name))
        assert ccv.lead_sig_valid(entry, key), name
        assert ccv.lead_sig_valid(Envelope.from_json(entry, name).to_json(), key), name  # kept through our record


def test_the_spawn_command_sets_the_empty_variables_the_traits_name() -> None:
    words = shlex.split(GOLDEN_332.text("teammate_spawn_command_from_real_lead.txt"))
    empty = [w.split("=", 1)[0] for w in words if w.endswith("=") and w.count("=") == 1]
    assert sorted(empty) == sorted(ccv.TRAITS["2.1.332"].empty_env)


# -- our store operations on a copy of each version's team ------------------------------------------------


@dataclass(frozen=True)
class GoldenTeam:
    """A copy of the real lead's team in a test's config root: reserved carol, her inbox with the real lead's
    signed messages, task #1."""

    golden: Golden
    layout: Layout

    @property
    def name(self) -> str:
        return self.golden.team

    def config_on_disk(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.layout.config_file(self.name).read_text(encoding="utf-8"))
        assert data["leadProcess"] == self.golden.lead_process
        assert list(data)[:6] == ["name", "createdAt", "leadAgentId", "leadSessionId", "leadProcess", "members"]
        return data


@pytest.fixture
def team(golden: Golden, layout: Layout) -> GoldenTeam:
    layout.team_dir(golden.team).mkdir(parents=True)
    layout.inbox_dir(golden.team).mkdir()
    shutil.copyfile(golden.dir / "team_config_teammate_reserved.json", layout.config_file(golden.team))
    shutil.copyfile(golden.dir / golden.carol_inbox, layout.inbox_file(golden.team, "carol"))
    layout.task_dir(golden.team).mkdir(parents=True)
    layout.task_lock_target(golden.team).write_bytes(b"")
    shutil.copyfile(golden.dir / "task_1_created.json", layout.task_file(golden.team, "1"))
    return GoldenTeam(golden, layout)


def test_member_changes_reproduce_what_the_real_lead_wrote(team: GoldenTeam) -> None:
    teams, golden = TeamStore(team.layout), team.golden
    path = team.layout.config_file(team.name)
    teams.set_member_fields(team.name, "carol", tmux_pane_id="%1", backend_type="tmux")
    assert path.read_text(encoding="utf-8") == golden.text("team_config_teammate_spawned.json")

    teams.set_active(team.name, "carol", True)
    data = team.config_on_disk()
    assert list(data["members"][1])[-2:] == ["backendType", "isActive"]  # appended, as the CLI's toggle does
    assert ("prompt" in data["members"][1]) == ccv.TRAITS[golden.version].member_prompt

    dave = teams.add_member(team.name, NewMember(name="dave", cwd="/home/user/proj"))
    assert team.config_on_disk()["members"][2]["agentId"] == dave.agent_id
    teams.remove_member(team.name, "dave")
    teams.set_active(team.name, "carol", False)
    teams.remove_member(team.name, "carol")
    assert path.read_text(encoding="utf-8") == golden.text("team_config_after_shutdown.json")
    assert teams.read(team.name).lead_process == LeadProcess.from_json(golden.lead_process)


def test_mail_into_a_real_lead_s_inbox_keeps_it_valid_to_its_version(team: GoldenTeam) -> None:
    TeamStore(team.layout).set_member_fields(team.name, "carol", tmux_pane_id="%1", backend_type="tmux")
    box = Mailbox(team.layout)
    inbox = team.layout.inbox_file(team.name, "carol")
    before = inbox.read_bytes()

    box.send(team.name, "carol", "CAROL-PING again", sender="team-lead", summary="ping")
    assert inbox.read_bytes().startswith(before.removesuffix(b"\n]"))  # the CLI's elements untouched, byte for byte
    assert inbox_faults(inbox) == []

    box.send(team.name, "team-lead", "carol reporting", sender="carol")
    lead_inbox = team.layout.inbox_file(team.name, "team-lead")
    [to_lead] = json.loads(lead_inbox.read_text())
    assert to_lead["color"] == "blue" and inbox_faults(lead_inbox) == []

    signed = json.loads(team.golden.text(team.golden.carol_inbox))
    unread = box.unread(team.name, "carol")
    assert len(unread) == len(signed) + 1
    assert box.mark_delivered(team.name, "carol", unread[: len(signed)]) == len(signed)
    delivered = json.loads(inbox.read_text(encoding="utf-8"))
    assert delivered[: len(signed)] == [{**e, "read": True} for e in signed]  # lead_sig and every key kept, in place
    assert [e["read"] for e in delivered] == [True] * len(signed) + [False]
    assert inbox_faults(inbox) == []
    assert team.config_on_disk()


def test_task_changes_reproduce_what_the_real_lead_wrote(team: GoldenTeam) -> None:
    tasks, golden = TaskStore(team.layout), team.golden
    path = team.layout.task_file(team.name, "1")

    result = tasks.update(team.name, "1", owner="carol")
    assert result.updated == ["owner"] and result.assignment_sent
    assert path.read_text(encoding="utf-8") == golden.text("task_1_owner_set.json")
    inbox = team.layout.inbox_file(team.name, "carol")
    assignment = parse_message(json.loads(inbox.read_text(encoding="utf-8"))[-1]["text"])
    assert isinstance(assignment, TaskAssignment) and assignment.task_id == "1"
    assert inbox_faults(inbox) == []
    if golden is GOLDEN_332:  # the one copy with the real lead's own assignment: ours has its keys in its order
        [real] = json.loads(golden.text("inbox_carol_task_assignment_signed.json"))
        assert list(json.loads(json.loads(inbox.read_text("utf-8"))[-1]["text"])) == list(json.loads(real["text"]))

    assert [t.id for t in tasks.unassign_all(team.name, "carol", f"carol@{team.name}").tasks] == ["1"]
    assert path.read_text(encoding="utf-8") == golden.text("task_1_after_unassign.json")

    created = tasks.create(team.name, "Write parser", "Implement the parser module", active_form="Writing parser")
    assert team.layout.task_file(team.name, created.id).read_text(encoding="utf-8") == golden.text(
        "task_1_created.json"
    ).replace('"id": "1"', f'"id": "{created.id}"')
    assert team.config_on_disk()
