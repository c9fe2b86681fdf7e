"""Task leases (issue 15, item 3): the lease in a task's metadata, its renewal by the owner, the sweep that sends an
expired lease's task back to pending, the fencing token that refuses a stale owner's change, and the fallback to
liveness for an owner that is not ours (a real `claude` renews nothing and never loses a task by lease)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from agentteams.store.file.store import FileStore
from agentteams.store.file.tasks import TaskStore
from agentteams.store.leases import LEASE_KEY, Lease, LeaseLostError, lease_seconds, now_ms
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence, write_presence
from agentteams.store.records import Task
from agentteams.team.lease_keeper import LeaseKeeper
from agentteams.tools.base import ToolContext
from agentteams.tools.runtime_hooks import TaskHookInfo
from agentteams.tools.team.task_tools import TaskListTool, TaskUpdateTool
from tests.support.builders import team_with_members
from tests.support.fake_model import FakeModel
from tests.support.runtime import Events, quick_polls, running_lead
from tests.support.wait import wait_until

TEAM = "t"


@pytest.fixture
def tasks(layout: Layout) -> TaskStore:
    team_with_members(layout, TEAM, "alice", "bob")
    for name in ("alice", "bob"):  # ours: each has a presence record
        write_presence(layout, TEAM, name, Presence(os.getpid(), f"s-{name}", "process"))
    return TaskStore(layout)


def lease(tasks: TaskStore, task_id: str) -> Lease:
    found = Lease.of(tasks.get(TEAM, task_id))
    assert found is not None
    return found


def run_out(tasks: TaskStore, task_id: str) -> None:
    """Its lease's end moved into the past, as if its owner had stopped renewing long ago."""

    def back(task: Task) -> bool:
        old = Lease.of(task)
        assert old is not None
        dataclasses.replace(old, expires_ms=now_ms() - 1).put(task)
        return True

    tasks.rewrite(TEAM, task_id, back)


def claimed_by(tasks: TaskStore, who: str) -> str:
    """A task claimed by `who` the way our teammate runtime does: claim, then its lease at once."""
    task = tasks.create(TEAM, f"{who}'s work")
    assert tasks.claim(TEAM, task.id, who).success
    tasks.renew_leases(TEAM, who)
    return task.id


def test_lease_length_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert lease_seconds() == 60.0
    monkeypatch.setenv("AGENTTEAMS_LEASE_SECONDS", "2.5")
    assert lease_seconds() == 2.5
    monkeypatch.setenv("AGENTTEAMS_LEASE_SECONDS", "0")
    assert lease_seconds() == 0.5  # never so short that a beat cannot renew it
    monkeypatch.setenv("AGENTTEAMS_LEASE_SECONDS", "soon")
    assert lease_seconds() == 60.0


def test_a_claim_carries_a_lease_kept_in_metadata(tasks: TaskStore, layout: Layout) -> None:
    before = now_ms()
    task_id = claimed_by(tasks, "alice")
    got = lease(tasks, task_id)
    assert (got.owner, got.token, got.seconds) == ("alice", 1, 60.0)
    assert before + 60_000 <= got.expires_ms <= now_ms() + 60_000
    on_disk = json.loads(layout.task_file(TEAM, task_id).read_text())
    assert on_disk["owner"] == "alice" and on_disk["status"] == "in_progress"
    assert on_disk["metadata"] == {LEASE_KEY: got.to_json()}  # the schema's own keys untouched
    assert Task.from_json(on_disk).owner == "alice"


def test_renewal_extends_only_when_half_is_gone_and_keeps_the_token(tasks: TaskStore) -> None:
    task_id = claimed_by(tasks, "alice")
    first = lease(tasks, task_id)
    tasks.renew_leases(TEAM, "alice")
    assert lease(tasks, task_id) == first  # most of it left: no write at this beat

    def nearly_out(task: Task) -> bool:
        dataclasses.replace(first, expires_ms=now_ms() + 1000).put(task)
        return True

    tasks.rewrite(TEAM, task_id, nearly_out)
    tasks.renew_leases(TEAM, "alice")
    renewed = lease(tasks, task_id)
    assert renewed.token == first.token and renewed.expires_ms >= now_ms() + 59_000
    tasks.renew_leases(TEAM, "bob")  # not bob's: nothing of his to renew
    assert lease(tasks, task_id).owner == "alice"


def test_an_assigned_task_gets_its_lease_at_the_owners_first_beat(tasks: TaskStore) -> None:
    task = tasks.create(TEAM, "for bob")
    tasks.update(TEAM, task.id, owner="bob", status="in_progress")  # by the lead: no lease yet (golden bytes)
    assert Lease.of(tasks.get(TEAM, task.id)) is None
    tasks.renew_leases(TEAM, "bob")
    assert (lease(tasks, task.id).owner, lease(tasks, task.id).token) == ("bob", 1)


def test_the_sweep_sends_an_expired_leases_task_back_to_pending(tasks: TaskStore) -> None:
    mine, other = claimed_by(tasks, "alice"), claimed_by(tasks, "bob")
    assert tasks.sweep_leases(TEAM) == []  # nothing run out
    run_out(tasks, mine)
    swept = tasks.sweep_leases(TEAM)
    assert [(b.task.id, b.owner) for b in swept] == [(mine, "alice")]
    assert swept[0].line() == (
        f"Task #{mine} is pending again: alice did not renew its lease on it (60s); its process may be stopped or hung."
    )
    back = tasks.get(TEAM, mine)
    assert (back.owner, back.status) == (None, "pending")
    got = lease(tasks, mine)
    assert (got.owner, got.token, got.taken_from) == (None, 1, "alice")
    assert tasks.get(TEAM, other).owner == "bob"  # a live lease stays
    assert tasks.sweep_leases(TEAM) == []  # once
    assert tasks.claim_next(TEAM, "bob").task is not None  # claimable again


def test_a_real_claude_owners_task_never_expires_by_lease(tasks: TaskStore, layout: Layout) -> None:
    """No lease in its metadata, or a lease of ours another (real) owner has since taken over, or an owner with no
    presence record: liveness alone decides, as before leases."""
    plain = tasks.create(TEAM, "claude's")
    tasks.update(TEAM, plain.id, owner="carol", status="in_progress")  # as a real claude writes its claim
    taken = claimed_by(tasks, "alice")
    run_out(tasks, taken)
    path = layout.task_file(TEAM, taken)
    data = json.loads(path.read_text())
    data["owner"] = "carol"  # a real claude reassigns the file in place: metadata kept as it was
    path.write_text(json.dumps(data))
    ghost = claimed_by(tasks, "alice")
    run_out(tasks, ghost)
    data = json.loads(layout.task_file(TEAM, ghost).read_text())
    data["owner"] = data["metadata"][LEASE_KEY]["owner"] = "dave"  # a lease naming an owner with no presence
    layout.task_file(TEAM, ghost).write_text(json.dumps(data))
    assert tasks.sweep_leases(TEAM) == []
    assert [tasks.get(TEAM, i).owner for i in (plain.id, taken, ghost)] == ["carol", "carol", "dave"]


def test_a_stale_owners_completion_is_refused_and_changes_nothing(tasks: TaskStore) -> None:
    task_id = claimed_by(tasks, "alice")
    run_out(tasks, task_id)
    tasks.sweep_leases(TEAM)
    with pytest.raises(LeaseLostError) as refused:
        tasks.update(TEAM, task_id, status="completed", assigned_by="alice")
    text = str(refused.value)
    assert text.startswith(f"task #{task_id} was taken back from you after your lease expired (not renewed for 60s,")
    assert text.endswith("it is now pending with no owner. Your change was not made: check TaskList before going on.")
    assert tasks.get(TEAM, task_id).status == "pending"

    assert tasks.claim(TEAM, task_id, "bob").success
    tasks.renew_leases(TEAM, "bob")
    assert lease(tasks, task_id).token == 2  # each claim raises the fencing token
    with pytest.raises(LeaseLostError, match="it is now in_progress, owned by bob"):
        tasks.update(TEAM, task_id, status="completed", assigned_by="alice")
    assert tasks.update(TEAM, task_id, status="completed", assigned_by="bob").updated == ["status"]


def test_a_reassignment_ends_the_lease_and_the_old_owner_is_fenced(tasks: TaskStore) -> None:
    task_id = claimed_by(tasks, "alice")
    tasks.update(TEAM, task_id, owner="bob")  # the lead hands it over
    assert (lease(tasks, task_id).owner, lease(tasks, task_id).token) == (None, 2)
    with pytest.raises(LeaseLostError, match=r"is no longer yours .*owned by bob"):
        tasks.update(TEAM, task_id, description="my notes", assigned_by="alice")
    tasks.renew_leases(TEAM, "bob")
    assert (lease(tasks, task_id).owner, lease(tasks, task_id).token) == ("bob", 3)
    tasks.update(TEAM, task_id, owner="alice", assigned_by="alice")  # taking it back openly is a new claim
    assert (lease(tasks, task_id).owner, lease(tasks, task_id).token) == ("alice", 4)
    assert tasks.update(TEAM, task_id, status="completed", assigned_by="alice").updated == ["status"]


def test_an_owner_handed_its_task_again_takes_a_new_lease(tasks: TaskStore) -> None:
    task_id = claimed_by(tasks, "alice")
    tasks.update(TEAM, task_id, owner="bob")
    tasks.update(TEAM, task_id, owner="alice")  # back to alice by the lead: the lease is nobody's until she acts
    assert (lease(tasks, task_id).owner, lease(tasks, task_id).token) == (None, 3)
    with pytest.raises(LeaseLostError, match="is no longer yours"):  # her old token is not today's
        tasks.update(TEAM, task_id, status="completed", assigned_by="alice")
    tasks.update(TEAM, task_id, owner="alice", assigned_by="alice")  # she takes it up again, knowingly
    assert (lease(tasks, task_id).owner, lease(tasks, task_id).token) == ("alice", 4)
    assert tasks.update(TEAM, task_id, status="completed", assigned_by="alice").updated == ["status"]
    other = tasks.create(TEAM, "handed over")
    tasks.update(TEAM, other.id, owner="alice")  # never claimed by her: no token of hers to fence with
    assert tasks.update(TEAM, other.id, status="in_progress", assigned_by="alice").updated == ["status"]
    assert lease(tasks, other.id).owner == "alice"  # and working on it, she takes its lease


def test_the_lead_and_a_metadata_change_keep_working(tasks: TaskStore) -> None:
    task_id = claimed_by(tasks, "alice")
    tasks.update(TEAM, task_id, metadata={"note": "x"}, assigned_by="alice")
    meta = tasks.get(TEAM, task_id).metadata or {}
    assert meta["note"] == "x" and meta[LEASE_KEY]["owner"] == "alice"  # the lease survives a metadata write
    assert tasks.update(TEAM, task_id, status="completed").updated == ["status"]  # the lead holds no token


def test_unassigning_a_dead_owner_ends_its_lease(tasks: TaskStore) -> None:
    task_id = claimed_by(tasks, "alice")
    assert [t.id for t in tasks.unassign_all(TEAM, "alice").tasks] == [task_id]
    assert (lease(tasks, task_id).owner, tasks.get(TEAM, task_id).status) == (None, "pending")


def test_the_tool_tells_the_stale_owners_model(layout: Layout, tmp_path: Path, tasks: TaskStore) -> None:
    store = FileStore(layout)
    alice = ToolContext(cwd=tmp_path, store=store, session_id="s-a", agent_name="alice", team_name=TEAM, is_lead=False)
    bob = ToolContext(cwd=tmp_path, store=FileStore(layout), session_id="s-b", agent_name="bob", team_name=TEAM,
                      is_lead=False)  # fmt: skip
    task = store.tasks.create(TEAM, "shared")
    assert not TaskUpdateTool().run({"taskId": task.id, "owner": "alice", "status": "in_progress"}, alice).is_error
    assert lease(store.tasks, task.id).owner == "alice"  # taken for itself: its lease starts at once
    run_out(store.tasks, task.id)
    listed = TaskListTool().run({}, bob)  # an agent that looks notices, and sends the task back
    assert f"#{task.id} [pending] shared" in listed.content
    heard: list[TaskHookInfo] = []

    def completed_hook(info: TaskHookInfo) -> str | None:
        heard.append(info)
        return None

    alice.hooks.task_completed = completed_hook
    result = TaskUpdateTool().run({"taskId": task.id, "status": "completed"}, alice)
    assert result.is_error and heard == []  # refused before a TaskCompleted hook hears of it
    assert f"task #{task.id} was taken back from you after your lease expired" in result.content
    assert "it is now pending with no owner" in result.content
    assert store.tasks.get(TEAM, task.id).status == "pending"


def test_the_leads_tick_renews_its_own_and_reports_each_taken_back_once(tasks: TaskStore, layout: Layout) -> None:
    write_presence(layout, TEAM, "team-lead", Presence(os.getpid(), "s-lead", "process"))
    own = tasks.create(TEAM, "the lead's own")
    tasks.update(TEAM, own.id, owner="team-lead", status="in_progress")
    theirs = claimed_by(tasks, "alice")
    run_out(tasks, theirs)
    keeper = LeaseKeeper(tasks, "team-lead")
    events = keeper.tick(TEAM)
    assert [(e.kind, e.agent) for e in events] == [("notice", "alice")]
    assert events[0].text.startswith(f"Task #{theirs} is pending again")
    assert lease(tasks, own.id).owner == "team-lead"
    assert keeper.tick(TEAM) == []


def test_the_leads_team_thread_takes_back_a_stopped_owners_task(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The running lead sweeps on its own: alice (ours, its process still there) stops renewing, her task goes back
    to pending with one line to the lead; a real claude's task, with no lease, stays with it; nobody is removed."""
    monkeypatch.setenv("AGENTTEAMS_LEASE_SECONDS", "0.5")
    quick_polls(monkeypatch)
    events = Events()
    with running_lead(layout, tmp_path, FakeModel([]), "alice", "carol", events=events) as lead:
        write_presence(layout, lead.team, "alice", Presence(os.getpid(), "s-alice", "in-process"))
        hers, claudes = lead.tasks.create(lead.team, "hers"), lead.tasks.create(lead.team, "claude's")
        lead.tasks.update(lead.team, claudes.id, owner="carol", status="in_progress")  # carol: no presence, no lease
        assert lead.tasks.claim(lead.team, hers.id, "alice").success
        lead.tasks.renew_leases(lead.team, "alice")  # her lease starts, and is never renewed

        wait_until(lambda: lead.tasks.get(lead.team, hers.id).owner is None, 5, "the lead to take back alice's task")
        assert lead.tasks.get(lead.team, hers.id).status == "pending"
        wait_until(lambda: "notice" in events.kinds("alice"), 5, "the lead's line about it")
        [line] = [e.text for e in events.items if e.kind == "notice" and e.agent == "alice"]
        assert line.startswith(f"Task #{hers.id} is pending again: alice did not renew its lease on it (0.5s)")
        assert lead.tasks.get(lead.team, claudes.id).owner == "carol"
        assert lead.members() == ["team-lead", "alice", "carol"]
