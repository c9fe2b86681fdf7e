"""Byte compatibility with what the real Claude Code CLI wrote (shared/interop/golden)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import dump_json
from agentteams.store.paths import Layout
from agentteams.store.protocol import IdleNotification, ShutdownApproved, ShutdownRequest, parse_message
from agentteams.store.records import Envelope, Task, TeamConfig
from tests.support.repo import TESTS

GOLDEN = TESTS / "golden"  # copied verbatim from shared/interop/golden
TEAM = "session-59a7c56e"
CWD = "/home/user/proj"


def golden(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


def golden_files() -> list[Path]:
    files = sorted(p for p in GOLDEN.glob("*.json") if not p.name.startswith("sessions_"))
    assert len(files) >= 14, f"golden files missing under {GOLDEN}"
    return files


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: p.name)
def test_golden_round_trips_byte_identical(path: Path) -> None:
    raw = path.read_text(encoding="utf-8")
    data = json.loads(raw)
    if path.name.startswith("team_config"):
        out = dump_json(TeamConfig.from_json(data).to_json())
    elif path.name.startswith("task_"):
        out = dump_json(Task.from_json(data).to_json())
    else:
        envs = [Envelope.from_json(e) for e in data]
        out = dump_json([e.to_json() for e in envs])
        for env in envs:
            msg = parse_message(env.text)
            if env.text.startswith("{"):
                assert msg is not None and msg.to_text() == env.text
    assert out == raw
    assert not raw.endswith("\n")


def _like(ours: dict[str, Any], theirs: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """`ours` with the run-specific values (times, ids) taken from `theirs`, order untouched."""
    return {k: theirs[k] if k in keys else v for k, v in ours.items()}


def test_team_store_writes_golden_config(layout: Layout) -> None:
    teams = TeamStore(layout)
    teams.create(
        TEAM, lead_session_id="59a7c56e-ba02-4852-8848-2be4790d8873", cwd=CWD, lead_pane_id="leader",
        lead_backend_type="in-process",
    )  # fmt: skip
    want = json.loads(golden("team_config_initial.json"))
    ours = json.loads(layout.config_file(TEAM).read_text())
    ours = _like(ours, want, ("createdAt",))
    ours["members"][0] = _like(ours["members"][0], want["members"][0], ("joinedAt",))
    assert dump_json(ours) == golden("team_config_initial.json")

    teams.add_member(
        TEAM,
        NewMember(name="alice", model="claude-opus-4-8", prompt="ALICEMARK You are alice. Reply briefly and wait.",
                  cwd=CWD),
    )  # fmt: skip
    teams.set_member_fields(TEAM, "alice", tmux_pane_id="%1", backend_type="tmux")
    for state, name in (
        (None, "team_config_teammate_spawned.json"),
        (False, "team_config_teammate_idle.json"),
    ):
        if state is not None:
            teams.set_active(TEAM, "alice", state)
        want = json.loads(golden(name))
        ours = json.loads(layout.config_file(TEAM).read_text())
        ours = _like(ours, want, ("createdAt",))
        ours["members"] = [_like(m, w, ("joinedAt",)) for m, w in zip(ours["members"], want["members"], strict=True)]
        assert dump_json(ours) == golden(name), name


def test_task_store_writes_golden_tasks(layout: Layout) -> None:
    TeamStore(layout).create(TEAM, cwd=CWD)
    TeamStore(layout).add_member(TEAM, NewMember(name="alice", cwd=CWD))
    tasks = TaskStore(layout)
    tasks.create(TEAM, "Write parser", "Implement the parser module", active_form="Writing parser")
    tasks.create(TEAM, "Write tests", "Add tests for the parser")
    assert layout.task_file(TEAM, "1").read_text() == golden("task_1_created.json")
    assert layout.task_file(TEAM, "2").read_text() == golden("task_2_created.json")

    result = tasks.update(TEAM, "2", owner="alice", add_blocked_by=["1"])
    assert result.updated == ["owner", "blockedBy"]
    assert result.assignment_sent
    assert layout.task_file(TEAM, "2").read_text() == golden("task_2_owner_blockedBy.json")
    assert layout.task_file(TEAM, "1").read_text() == golden("task_1_after_blocks.json")

    tasks.unassign_all(TEAM, "alice")
    assert layout.task_file(TEAM, "2").read_text() == golden("task_2_after_unassign.json")

    inbox = json.loads(layout.inbox_file(TEAM, "alice").read_text())
    want = json.loads(golden("inbox_alice_task_assignment.json"))
    assert list(inbox[0]) == list(want[0])
    ours_msg, their_msg = json.loads(inbox[0]["text"]), json.loads(want[0]["text"])
    assert list(ours_msg) == list(their_msg)
    assert _like(ours_msg, their_msg, ("timestamp",)) == their_msg


def _inbox_matches(path: Path, golden_name: str) -> None:
    ours = json.loads(path.read_text())
    want = json.loads(golden(golden_name))
    fixed = [_like(o, w, ("timestamp", "msg_id")) for o, w in zip(ours, want, strict=True)]
    for o, w in zip(fixed, want, strict=True):
        if o["text"].startswith("{"):
            msg, their = json.loads(o["text"]), json.loads(w["text"])
            assert list(msg) == list(their)
            o["text"] = w["text"]
    assert dump_json(fixed) == golden(golden_name)


def test_mailbox_writes_golden_inboxes(layout: Layout) -> None:
    TeamStore(layout).create(TEAM, cwd=CWD)
    TeamStore(layout).add_member(TEAM, NewMember(name="alice", cwd=CWD))
    TeamStore(layout).add_member(TEAM, NewMember(name="bob", cwd=CWD))
    box = Mailbox(layout)
    box.send(TEAM, "alice", "ALICEMARK You are alice. Reply briefly and wait.", sender="team-lead")
    box.send(TEAM, "alice", "Hello alice, please start on task 1", sender="team-lead", summary="greeting alice")
    _inbox_matches(layout.inbox_file(TEAM, "alice"), "inbox_alice_prompt_and_message.json")

    box.send_message(TEAM, "team-lead", IdleNotification(sender="alice", timestamp="t"), sender="alice")
    _inbox_matches(layout.inbox_file(TEAM, "team-lead"), "inbox_lead_idle_notification.json")

    box.send_message(TEAM, "team-lead", IdleNotification(sender="bob", timestamp="t"), sender="bob")
    box.send(TEAM, "team-lead", "bob status: all good", sender="bob", summary="status report")
    lead_inbox = json.loads(layout.inbox_file(TEAM, "team-lead").read_text())[1:]
    alt = layout.root / "bob_to_lead.json"
    alt.write_text(json.dumps(lead_inbox))
    _inbox_matches(alt, "inbox_lead_plain_message_from_teammate.json")


def test_protocol_messages_match_golden_text() -> None:
    req = ShutdownRequest(
        request_id="shutdown-1795342378465@alice", sender="team-lead", reason="All done",
        timestamp="2026-11-22T10:12:58.465Z",
    )  # fmt: skip
    want = json.loads(golden("inbox_alice_shutdown_request.json"))[0]["text"]
    assert req.to_text() == want
    approved = ShutdownApproved(
        request_id="shutdown-1795342378465@alice", sender="alice", timestamp="2026-11-22T10:12:59.056Z",
        pane_id="%1", backend_type="tmux",
    )  # fmt: skip
    assert approved.to_text() == json.loads(golden("inbox_lead_shutdown_approved.json"))[0]["text"]
    assert ShutdownRequest.new_request_id("alice").startswith("shutdown-")
    assert ShutdownRequest.new_request_id("alice").endswith("@alice")
