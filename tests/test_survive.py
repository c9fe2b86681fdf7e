"""A team that outlives its lead, in process: a teammate waits out a dead lead for the grace period, the lead's
keys survive it, a resumed lead finds its team by `leadSessionId` and relaunches a dead teammate as it was."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from agentteams.agent.session import Session, SessionOptions
from agentteams.pids import pid_alive
from agentteams.store.atomicjson import atomic_write_json, now_iso
from agentteams.store.files import open_store
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.records import Envelope, TeamConfig
from agentteams.store.signing import LEAD_DOMAIN, Keyring, verifies
from agentteams.store.teams import TeamStore
from agentteams.team import leadwatch
from agentteams.team.adopt import resume_team, team_of
from agentteams.team.lead import LeadRuntime
from agentteams.team.leadkeys import restore_lead_keys, save_lead_keys
from agentteams.team.spawning import SpawnRequest, teammate_argv
from tests.support.fake_model import FakeModel, text
from tests.support.runtime import TEAM, WAIT, RecordingSpawner, quick_polls, running_teammate, teammate_rig
from tests.support.wait import wait_until


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_polls(monkeypatch)
    monkeypatch.setattr(leadwatch, "CHECK_EVERY", 0.02)


class FakeLead:
    """The lead's liveness as the teammate's watch sees it, with each look counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gone = threading.Event()
        self.looks = 0
        monkeypatch.setattr(leadwatch, "lead_gone", self._look)

    def _look(self, *_args: object) -> bool:
        self.looks += 1
        return self.gone.is_set()

    def wait_looks(self, more: int) -> None:
        target = self.looks + more
        wait_until(lambda: self.looks >= target, WAIT, f"{more} looks at the lead")


@pytest.mark.usefixtures("quick")
def test_a_teammate_waits_for_its_dead_lead_and_carries_on_when_it_is_back(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    lead = FakeLead(monkeypatch)
    rig = teammate_rig(layout, tmp_path, FakeModel([[text("back at work")]]))
    with running_teammate(rig):
        lead.gone.set()
        lead.wait_looks(10)  # far past the 2 s it used to take to stop: the grace period is ten minutes
        assert rig.thread is not None and rig.thread.is_alive(), "the teammate stopped with its lead"
        lead.gone.clear()  # a resumed lead
        rig.from_lead("Carry on.")
        rig.wait_turns(1)
    assert leadwatch.grace() == leadwatch.DEFAULT_GRACE == 600.0


@pytest.mark.usefixtures("quick")
def test_a_teammate_stops_when_its_lead_stays_gone_past_the_grace_period(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(leadwatch.GRACE_ENV, "0.3")
    lead = FakeLead(monkeypatch)
    rig = teammate_rig(layout, tmp_path, FakeModel([]))
    with running_teammate(rig):
        lead.wait_looks(2)
        gone_at = time.monotonic()
        lead.gone.set()
        wait_until(lambda: rig.thread is not None and not rig.thread.is_alive(), WAIT, "alice to give up")
        assert time.monotonic() - gone_at >= 0.3, "it did not wait out the grace period"


def test_the_grace_period_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(leadwatch.GRACE_ENV, "12.5")
    assert leadwatch.grace() == 12.5
    monkeypatch.setenv(leadwatch.GRACE_ENV, "soon")
    assert leadwatch.grace() == leadwatch.DEFAULT_GRACE


def test_a_resumed_lead_signs_with_the_keys_its_teammates_were_started_with(tmp_path: Path, layout: Layout) -> None:
    TeamStore(layout).create(TEAM, cwd=str(tmp_path))
    first = Keyring()
    public = first.new_lead_key(TEAM, "alice")
    save_lead_keys(layout, first, TEAM)
    assert (layout.team_dir(TEAM) / "lead-keys.json").stat().st_mode & 0o077 == 0
    second = Keyring()  # the resumed lead's process
    assert restore_lead_keys(layout, second, TEAM) == ["alice"]
    env = Envelope(sender=LEAD_NAME, text="carry on", timestamp=now_iso())
    second.seal(TEAM, "alice", env)
    assert verifies(LEAD_DOMAIN, env, public.key)


def test_a_relaunched_teammate_is_started_with_its_session_resumed(tmp_path: Path) -> None:
    req = SpawnRequest(name="bob", team=TEAM, color="green", cwd=tmp_path, parent_session_id="p", model="m",
                       resume="0b8f4c43-6a0b-4d3e-9a59-5b8e1c2b7d11")  # fmt: skip
    argv = teammate_argv(req, ["agentteams"])
    assert argv[-2:] == ["--resume", "0b8f4c43-6a0b-4d3e-9a59-5b8e1c2b7d11"]
    assert argv[argv.index("--agent-color") + 1] == "green"


def test_a_resumed_lead_finds_its_team_and_relaunches_a_dead_teammate_as_it_was(tmp_path: Path, layout: Layout) -> None:
    from agentteams.store.api import NewMember

    store = open_store(layout)
    teams = store.teams
    teams.create(TEAM, lead_session_id="old-lead-session", cwd=str(tmp_path))
    member = teams.add_member(TEAM, NewMember(name="bob", model="claude-x", cwd=str(tmp_path), agent_type="tester"))
    teams.set_member_fields(TEAM, "bob", mode="acceptEdits", session_id="bob-session")
    options = SessionOptions(cwd=tmp_path)
    options.session_id = "old-lead-session"  # as -c sets it
    session = Session(options, FakeModel([]), layout=layout, store=store)
    spawner = RecordingSpawner()
    runtime = LeadRuntime(session, spawner)
    assert team_of(store, "old-lead-session") == TEAM and team_of(store, "another") is None
    adopted = resume_team(runtime)
    assert adopted is not None and adopted.relaunched == ["bob"] and session.ctx.team_name == TEAM
    [req] = spawner.spawned
    assert (req.name, req.color, req.model, req.permission_mode, req.agent_type, req.resume) == (
        "bob", member.color, "claude-x", "acceptEdits", "tester", "bob-session"
    )  # fmt: skip
    config: TeamConfig = teams.read(TEAM)
    assert config.lead_process is not None and config.lead_process.pid == os.getpid()
    assert pid_alive(config.lead_process.pid) and "bob" in runtime.members()
    assert "Restarted with their own conversations: bob." in adopted.news()


def test_what_a_teammate_sent_its_dead_lead_long_ago_still_verifies_after_the_resume(
    tmp_path: Path, layout: Layout
) -> None:
    from datetime import UTC, datetime, timedelta

    from agentteams.store.api import NewMember
    from agentteams.store.presence import Presence

    store = open_store(layout)
    store.teams.create(TEAM, lead_session_id="lead-s", cwd=str(tmp_path))
    store.teams.add_member(TEAM, NewMember(name="bob", cwd=str(tmp_path)))
    bob_keys = Keyring()
    store.teams.set_member_fields(TEAM, "bob", verify_key=bob_keys.member_key(TEAM, "bob").public)
    died = datetime.now(UTC) - timedelta(minutes=15)
    old = Presence(pid=2**22 + 1, session_id="lead-s", backend="tmux", updated_at=int(died.timestamp() * 1000))
    layout.presence_file(TEAM, LEAD_NAME).parent.mkdir(parents=True)
    atomic_write_json(layout.presence_file(TEAM, LEAD_NAME), old.to_json())  # its last beat, fifteen minutes ago
    env = Envelope(sender="bob", text="finished", timestamp=(died + timedelta(minutes=5)).isoformat(), msg_id="m-1")
    bob_keys.adopt(TEAM, "bob")
    bob_keys.seal(TEAM, LEAD_NAME, env)
    options = SessionOptions(cwd=tmp_path)
    options.session_id = "lead-s"
    runtime = LeadRuntime(Session(options, FakeModel([]), layout=layout, store=store), RecordingSpawner())
    assert runtime.trust.judge(env, store.teams.read(TEAM)) == "forged"  # ten minutes old, for a new process
    fresh = LeadRuntime(Session(options, FakeModel([]), layout=layout, store=store), RecordingSpawner())
    resume_team(fresh)
    assert fresh.trust.judge(env, store.teams.read(TEAM)) == "verified"


def test_a_second_lead_does_not_take_a_team_whose_lead_still_runs(tmp_path: Path, layout: Layout) -> None:
    from agentteams.store.presence import Presence

    store = open_store(layout)
    store.teams.create(TEAM, lead_session_id="lead-s", cwd=str(tmp_path))
    store.presence.write(TEAM, LEAD_NAME, Presence(pid=os.getpid(), session_id="lead-s", backend="tmux"))
    options = SessionOptions(cwd=tmp_path)
    options.session_id = "lead-s"  # `agentteams -c` in a second terminal
    runtime = LeadRuntime(Session(options, FakeModel([]), layout=layout, store=store), RecordingSpawner())
    assert resume_team(runtime) is None
    assert runtime.team is None and store.teams.read(TEAM).lead_process is None


def test_a_plan_the_dead_lead_read_can_be_approved_by_the_resumed_one(tmp_path: Path, layout: Layout) -> None:
    from agentteams.store.api import NewMember
    from agentteams.store.protocol import PlanApprovalRequest, plan_digest

    store = open_store(layout)
    store.teams.create(TEAM, lead_session_id="lead-s", cwd=str(tmp_path))
    store.teams.add_member(TEAM, NewMember(name="bob", cwd=str(tmp_path)))
    plan = PlanApprovalRequest(sender="bob", timestamp=now_iso(), plan_content="PLAN: one step", request_id="plan-1")
    store.mail.send(TEAM, LEAD_NAME, plan.to_text(), sender="bob")
    store.mail.mark_delivered(TEAM, LEAD_NAME, store.mail.unread(TEAM, LEAD_NAME))  # its model had it, then it died
    options = SessionOptions(cwd=tmp_path)
    options.session_id = "lead-s"
    runtime = LeadRuntime(Session(options, FakeModel([]), layout=layout, store=store), RecordingSpawner())
    assert runtime.promises.plan_digest("plan-1") is None
    resume_team(runtime)
    assert runtime.promises.plan_digest("plan-1") == plan_digest("PLAN: one step")
