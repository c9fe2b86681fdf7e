"""A team that outlives its lead, in process: a teammate waits out a dead lead for the grace period, a resumed lead
finds its team by `leadSessionId`, relaunches a dead teammate as it was, and restarts a live one that checks the dead
lead's key at its next pause, with a new key (no private key is ever written down)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from agentteams.agent.session import Session, SessionOptions
from agentteams.pids import pid_alive
from agentteams.store.api import Store
from agentteams.store.fs.atomic_json import atomic_write_json, now_iso
from agentteams.store.opener import open_store
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.presence import Presence, State
from agentteams.store.records import Envelope, TeamConfig
from agentteams.store.signing import LEAD_DOMAIN, Keyring, verifies
from agentteams.team.lead.adopt import team_of
from agentteams.team.lead.runtime import LeadRuntime
from agentteams.team.spawn.base import Handle, SpawnRequest, teammate_argv
from agentteams.team.teammate import lead_watch as leadwatch
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


class PaneSpawner(RecordingSpawner):
    """A tmux spawner's answers (keys handed out), each stop ending the old teammate's stand-in process."""

    backend = "tmux"

    def __init__(self, procs: dict[str, subprocess.Popen[bytes]]) -> None:
        super().__init__()
        self.procs = procs

    def stop(self, handle: Handle) -> None:
        super().stop(handle)
        self.procs[handle.name].kill()
        self.procs[handle.name].wait()


def live_teammate(store: Store, tmp_path: Path, state: State) -> subprocess.Popen[bytes]:
    """bob of ours, live in a pane: its entry (with its session), its presence record, and a process standing in."""
    from agentteams.store.api import NewMember

    store.teams.create(TEAM, lead_session_id="lead-s", cwd=str(tmp_path))
    store.teams.add_member(TEAM, NewMember(name="bob", cwd=str(tmp_path)))
    store.teams.set_member_fields(TEAM, "bob", session_id="bob-session", tmux_pane_id="%7")
    proc = subprocess.Popen(["sleep", "60"])
    store.presence.write(TEAM, "bob", Presence(pid=proc.pid, session_id="bob-session", backend="tmux", state=state))
    return proc


def resumed_lead(store: Store, layout: Layout, tmp_path: Path, spawner: RecordingSpawner) -> LeadRuntime:
    options = SessionOptions(cwd=tmp_path)
    options.session_id = "lead-s"  # as -c sets it
    return LeadRuntime(Session(options, FakeModel([]), layout=layout, store=store), spawner)


def test_a_live_teammate_is_restarted_with_a_new_key_at_its_next_pause(tmp_path: Path, layout: Layout) -> None:
    store = open_store(layout)
    bob = live_teammate(store, tmp_path, "working")
    spawner = PaneSpawner({"bob": bob})
    runtime = resumed_lead(store, layout, tmp_path, spawner)
    adopted = runtime.resume_team()
    assert adopted is not None and adopted.rekeyed == ["bob"] and adopted.relaunched == []
    [_changes, chore] = runtime.chores  # `agentteams set` requests (team/lead/live_changes.py), then the rekeying
    chore(TEAM)  # still in its turn: left alone
    assert spawner.spawned == [] and bob.poll() is None
    record = store.presence.read(TEAM, "bob")
    assert record is not None
    record.state = "idle"
    store.presence.write(TEAM, "bob", record)
    chore(TEAM)
    assert bob.poll() is not None and spawner.stopped == ["bob"]
    [req] = spawner.spawned
    assert req.resume == "bob-session" and req.lead_key is not None and req.name == "bob"
    env = Envelope(sender=LEAD_NAME, text="carry on", timestamp=now_iso())
    store.keyring.seal(TEAM, "bob", env)  # what the lead writes bob now verifies with the key on its new command line
    assert verifies(LEAD_DOMAIN, env, req.lead_key.key)
    assert not list(layout.team_dir(TEAM).rglob("*key*")), "a key was written down"
    chore(TEAM)
    assert len(spawner.spawned) == 1, "restarted twice"


def test_a_teammate_asking_the_dead_lead_is_restarted_and_asked_to_carry_on(tmp_path: Path, layout: Layout) -> None:
    from agentteams.store.protocol import PermissionRequest
    from agentteams.team.lead.restarts import CARRY_ON

    store = open_store(layout)
    bob = live_teammate(store, tmp_path, "working")
    ask = PermissionRequest(request_id="perm-1", agent_id=f"bob@{TEAM}", tool_name="Bash", description="run it",
                            input={"command": "make"}, permission_suggestions=[])  # fmt: skip
    store.mail.send(TEAM, LEAD_NAME, ask.to_text(), sender="bob")  # the dead lead never answered
    record = store.presence.read(TEAM, "bob")
    assert record is not None
    record.asking = True
    store.presence.write(TEAM, "bob", record)
    spawner = PaneSpawner({"bob": bob})
    runtime = resumed_lead(store, layout, tmp_path, spawner)
    runtime.resume_team()
    assert store.mail.unread(TEAM, LEAD_NAME) == [], "the old ask would be answered unsigned, and refused"
    runtime.chores[-1](TEAM)  # the rekeying, added last
    [req] = spawner.spawned
    [note] = store.mail.unread(TEAM, "bob")
    assert note.text == CARRY_ON and req.lead_key is not None
    assert verifies(LEAD_DOMAIN, note, req.lead_key.key)


def test_a_teammate_restarted_while_its_plan_waited_still_takes_the_verdict(tmp_path: Path, layout: Layout) -> None:
    from agentteams.store.api import NewMember
    from agentteams.store.protocol import PlanApprovalRequest, plan_digest
    from agentteams.team.teammate.plan_verdict import pending_plan

    store = open_store(layout)
    store.teams.create(TEAM, lead_session_id="lead-s", cwd=str(tmp_path))
    store.teams.add_member(TEAM, NewMember(name="bob", cwd=str(tmp_path)))
    plan = PlanApprovalRequest(sender="bob", timestamp=now_iso(), plan_content="PLAN: two steps", request_id="plan-9")
    store.mail.send(TEAM, LEAD_NAME, plan.to_text(), sender="bob")
    assert pending_plan(store.mail, TEAM, "bob", LEAD_NAME) == ("plan-9", plan_digest("PLAN: two steps"))
    assert pending_plan(store.mail, TEAM, "carol", LEAD_NAME) is None
    verdict = '{"type": "plan_approval_response", "requestId": "plan-9", "approved": false, "feedback": "no"}'
    store.mail.send(TEAM, "bob", verdict, sender=LEAD_NAME)
    assert pending_plan(store.mail, TEAM, "bob", LEAD_NAME) is None


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
    adopted = runtime.resume_team()
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
    fresh.resume_team()
    assert fresh.trust.judge(env, store.teams.read(TEAM)) == "verified"


def test_a_second_lead_does_not_take_a_team_whose_lead_still_runs(tmp_path: Path, layout: Layout) -> None:

    store = open_store(layout)
    store.teams.create(TEAM, lead_session_id="lead-s", cwd=str(tmp_path))
    store.presence.write(TEAM, LEAD_NAME, Presence(pid=os.getpid(), session_id="lead-s", backend="tmux"))
    options = SessionOptions(cwd=tmp_path)
    options.session_id = "lead-s"  # `agentteams -c` in a second terminal
    runtime = LeadRuntime(Session(options, FakeModel([]), layout=layout, store=store), RecordingSpawner())
    assert runtime.resume_team() is None
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
    runtime.resume_team()
    assert runtime.promises.plan_digest("plan-1") == plan_digest("PLAN: one step")


def test_a_dead_teammate_that_was_asking_is_relaunched_and_asked_to_carry_on(tmp_path: Path, layout: Layout) -> None:
    from agentteams.store.api import NewMember
    from agentteams.store.protocol import PermissionRequest
    from agentteams.team.lead.restarts import CARRY_ON

    store = open_store(layout)
    store.teams.create(TEAM, lead_session_id="lead-s", cwd=str(tmp_path))
    store.teams.add_member(TEAM, NewMember(name="bob", cwd=str(tmp_path)))
    store.teams.set_member_fields(TEAM, "bob", session_id="bob-session")
    ask = PermissionRequest(request_id="perm-2", agent_id=f"bob@{TEAM}", tool_name="Write", description="write",
                            input={"file_path": "x"}, permission_suggestions=[])  # fmt: skip
    store.mail.send(TEAM, LEAD_NAME, ask.to_text(), sender="bob")  # then bob's process died with the lead's
    spawner = RecordingSpawner()
    adopted = (resumed_lead(store, layout, tmp_path, spawner)).resume_team()
    assert adopted is not None and adopted.relaunched == ["bob"]
    assert store.mail.unread(TEAM, LEAD_NAME) == [], "an ask nobody waits for any more would reach the person"
    [note] = store.mail.unread(TEAM, "bob")
    assert note.text == CARRY_ON and spawner.spawned[0].resume == "bob-session"
