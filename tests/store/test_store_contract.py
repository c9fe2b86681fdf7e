"""The store interface's contract, written against `Store` alone so every implementation runs it (the file
store today): teams, members and the lead process, inboxes and their waits, tasks and claims, presence."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agentteams.errors import NotFoundError
from agentteams.pids import LeadProcess
from agentteams.store.api import NewMember, Store
from agentteams.store.file.store import FileStore
from agentteams.store.fs.atomic_json import epoch_ms
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence


def _file_store(root: Path) -> Store:
    return FileStore(Layout(root))  # mypy checks here that FileStore is a Store


STORES: dict[str, Callable[[Path], Store]] = {"file": _file_store}


@pytest.fixture(params=sorted(STORES))
def store(request: pytest.FixtureRequest, config_root: Path) -> Store:
    return STORES[request.param](config_root)


@pytest.fixture
def team(store: Store) -> str:
    name = store.teams.create("Contract Team", lead_session_id="S").name
    for who in ("alice", "bob"):
        store.teams.add_member(name, NewMember(name=who))
    return name


def test_teams_and_members(store: Store, team: str) -> None:
    assert team == store.teams.canonical("Contract Team") and store.teams.exists(team)
    config = store.teams.read(team)
    assert [m.name for m in config.members] == ["team-lead", "alice", "bob"]
    assert config.lead_session_id == "S" and team in store.teams.location(team)
    store.teams.set_active(team, "alice", False)
    store.teams.set_mode(team, "alice", "acceptEdits")
    alice = store.teams.read(team).member("alice")
    assert alice is not None and alice.is_active is False and alice.mode == "acceptEdits"
    assert store.teams.remove_member(team, "bob") is not None
    assert store.teams.read(team).member("bob") is None
    with pytest.raises(NotFoundError):
        store.teams.read("no-such-team")


def test_a_lead_process_is_recorded_and_claimed_by_compare_and_set(store: Store) -> None:
    mine = LeadProcess.for_this_process(epoch_ms())
    team = store.teams.create("Led Team", lead_process=mine).name
    assert store.teams.read(team).lead_process == mine
    successor = LeadProcess(mine.pid + 1, mine.pid_space, mine.claimed_at + 1)
    assert not store.teams.claim_lead(team, successor)  # expected none: lost
    assert store.teams.read(team).lead_process == mine
    assert store.teams.claim_lead(team, successor, expected=mine)
    assert store.teams.read(team).lead_process == successor


def test_mail_is_delivered_once_and_in_order(store: Store, team: str) -> None:
    for i in range(3):
        store.mail.send(team, "alice", f"m{i}", sender="team-lead", summary=f"s{i}")
    unread = store.mail.unread(team, "alice")
    assert [e.text for e in unread] == ["m0", "m1", "m2"] and unread[0].summary == "s0"
    assert store.mail.mark_delivered(team, "alice", unread[:2]) == 2
    assert [e.text for e in store.mail.unread(team, "alice")] == ["m2"]
    assert [e.text for e in store.mail.read_live(team, "alice")] == ["m0", "m1", "m2"]
    assert sorted(store.mail.broadcast(team, "all hands", sender="team-lead")) == ["alice", "bob"]
    assert store.mail.unread(team, "bob")[-1].text == "all hands"


def test_a_wait_wakes_on_new_mail_and_times_out_without(store: Store, team: str) -> None:
    with store.watch(team, "alice") as waiter:
        started = time.monotonic()
        assert waiter.wait(0.2) is False and time.monotonic() - started >= 0.15
        sender = threading.Timer(0.05, lambda: store.mail.send(team, "alice", "wake up", sender="bob"))
        sender.start()
        try:
            assert waiter.wait(5.0) is True
        finally:
            sender.join()
    assert [e.text for e in store.mail.unread(team, "alice")] == ["wake up"]


def test_a_task_watch_wakes_on_a_new_task(store: Store, team: str) -> None:
    with store.watch(team, "alice", tasks=True) as waiter:
        store.tasks.create(team, "new work")
        assert waiter.wait(5.0) is True


def test_tasks_claims_and_unassignment(store: Store, team: str) -> None:
    first = store.tasks.create(team, "first")
    second = store.tasks.create(team, "second", blocked_by=[first.id])
    assert [t.id for t in store.tasks.list_tasks(team)] == [first.id, second.id]
    assert store.tasks.has_list(team)
    claim = store.tasks.claim_next(team, "alice")
    assert claim.success and claim.task is not None and claim.task.id == first.id
    assert not store.tasks.claim(team, first.id, "bob").success  # exclusive
    assert store.tasks.claim(team, second.id, "bob").reason == "blocked"
    moved = store.tasks.unassign_all(team, "alice")
    assert [t.id for t in moved.tasks] == [first.id]
    back = store.tasks.get(team, first.id)
    assert back.owner is None and back.status == "pending"
    done = store.tasks.update(team, first.id, status="completed")
    assert "status" in done.updated
    assert store.tasks.claim_next(team, "bob").task is not None


def test_presence(store: Store, team: str) -> None:
    assert store.presence.read(team, "alice") is None
    store.presence.write(team, "alice", Presence(pid=4242, session_id="s", backend="tmux", state="idle"))
    seen = store.presence.read(team, "alice")
    assert seen is not None and (seen.pid, seen.state) == (4242, "idle")
    store.presence.remove(team, "alice")
    assert store.presence.read(team, "alice") is None


def test_deleting_a_team(store: Store, team: str) -> None:
    for who in ("alice", "bob"):
        store.teams.remove_member(team, who)
    store.teams.delete(team)
    assert not store.teams.exists(team) and not store.teams.present(team)
