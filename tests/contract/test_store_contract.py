"""The store contract: every behaviour the runtimes rely on, run against the file store and the Redis store alike
(tests/contract/conftest.py gives each test both). A store that fails one breaks a guarantee, not a detail."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentteams.errors import AgentTeamsError, ConflictError, NotFoundError
from agentteams.pids import LeadProcess
from agentteams.store.api import NewMember, Store
from agentteams.store.leases import LeaseLostError, TakenBack
from agentteams.store.presence import Presence
from agentteams.store.records import Task, TeamConfig
from tests.support.wait import wait_until

ROOT = Path(__file__).resolve().parents[2]


def team_of(store: Store, name: str = "alpha") -> str:
    return store.teams.create(name, description="contract").name


# -- teams and members ---------------------------------------------------------------------------------


def test_create_read_and_a_taken_name_gets_a_suffix(store: Store) -> None:
    team = team_of(store, "Alpha Team")
    assert team == "alpha-team"
    config = store.teams.read(team)
    assert config.description == "contract" and [m.name for m in config.members] == ["team-lead"]
    assert store.teams.create("alpha team").name == "alpha-team-2"
    assert store.teams.exists(team) and store.teams.present(team)
    assert {c.name for c in store.teams.list_teams() if not isinstance(c, Exception)} == {"alpha-team", "alpha-team-2"}
    with pytest.raises(NotFoundError):
        store.teams.read("nobody")


def test_concurrent_writers_lose_no_member(store: Store) -> None:
    team = team_of(store)
    errors: list[BaseException] = []

    def join(worker: int) -> None:
        try:
            for i in range(10):
                store.teams.add_member(team, NewMember(f"w{worker}-{i}", cwd="/tmp"))
        except BaseException as e:  # reported below: a thread's failure must fail the test
            errors.append(e)

    threads = [threading.Thread(target=join, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    names = {m.name for m in store.teams.read(team).members}
    assert names == {"team-lead", *(f"w{w}-{i}" for w in range(6) for i in range(10))}


def test_concurrent_processes_lose_no_member(store: Store, tmp_path: Path) -> None:
    team = store.teams.create("race").name
    outs = run_workers(tmp_path, [["join", f"p{n}", "8"] for n in range(6)])
    joined = [line.split()[1] for out in outs for line in out.splitlines() if line.startswith("joined ")]
    assert sorted(joined) == sorted(f"p{n}-{i}" for n in range(6) for i in range(8))  # none renamed, none lost
    assert {m.name for m in store.teams.read(team).members} == {"team-lead", *joined}


def run_workers(tmp_path: Path, commands: list[list[str]]) -> list[str]:
    """Start one tests/contract/worker.py process per command, release them together, return their outputs."""
    go = tmp_path / "go"
    argv = [sys.executable, "-m", "tests.contract.worker"]
    procs = [
        subprocess.Popen([*argv, cmd[0], cmd[1], str(go), *cmd[2:]], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        for cmd in commands
    ]
    try:
        go.touch()
        outs = [p.communicate(timeout=120)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert [p.returncode for p in procs] == [0] * len(procs)
    return outs


def test_update_compare_and_set_and_write_if(store: Store) -> None:
    team = team_of(store)

    def change(config: TeamConfig) -> str:
        config.description = "changed"
        return "done"

    assert store.teams.update(team, change) == "done"
    assert store.teams.read(team).description == "changed"
    store.teams.update(team, lambda c: setattr(c, "description", "not kept"), write_if=lambda _: False)
    assert store.teams.read(team).description == "changed"


def test_claim_lead_is_compare_and_set(store: Store) -> None:
    first = LeadProcess(100, "ns", 1000)
    team = store.teams.create("led", lead_process=first).name
    second, third = LeadProcess(200, "ns", 2000), LeadProcess(300, "ns", 3000)
    assert store.teams.claim_lead(team, second, expected=first)
    assert not store.teams.claim_lead(team, third, expected=first)  # another claimed it first: nothing written
    found = store.teams.read(team).lead_process
    assert found is not None and found.pid == 200


def test_members_add_remove_depart_return(store: Store) -> None:
    team = team_of(store)
    alice = store.teams.add_member(team, NewMember("alice", agent_type="worker", cwd="/w"))
    assert alice.agent_id == f"alice@{team}" and alice.color == "blue"
    assert store.teams.add_member(team, NewMember("alice", cwd="/w")).name == "alice-2"
    held, added = store.teams.add_member_once(team, NewMember("alice", cwd="/w"), live=lambda m: True)
    assert (held.name, added) == ("alice", False)
    assert store.teams.set_active(team, "alice", False).is_active is False
    assert store.teams.depart_member(team, "alice") is not None
    config = store.teams.read(team)
    assert config.member("alice") is None and [m.name for m in config.departed or []] == ["alice"]
    back = store.teams.return_member(team, "alice")
    assert back is not None and store.teams.read(team).member("alice") is not None
    assert store.teams.remove_member(team, "alice-2") is not None
    assert store.teams.remove_member(team, "nobody") is None
    with pytest.raises(ConflictError):
        store.teams.remove_member(team, "team-lead")
    with pytest.raises(ConflictError):
        store.teams.delete(team)
    store.teams.delete(team, force=True)
    assert not store.teams.exists(team) and not store.teams.present(team)


# -- inboxes -------------------------------------------------------------------------------------------


def test_inbox_order_unread_and_delivery(store: Store) -> None:
    team = team_of(store)
    store.teams.add_member(team, NewMember("bob", cwd="/w"))
    sent = [store.mail.send(team, "bob", f"m{i}", sender="team-lead") for i in range(5)]
    assert [(e.text, e.read) for e in store.mail.read_live(team, "bob")][:1] == [("m0", False)]  # before any read
    assert [e.text for e in store.mail.unread(team, "bob")] == ["m0", "m1", "m2", "m3", "m4"]
    assert store.mail.unread(team, "bob")[0].msg_id == sent[0].msg_id
    assert store.mail.mark_delivered(team, "bob", sent[:2]) == 2
    assert store.mail.mark_delivered(team, "bob", sent[:2]) == 0  # once only
    assert [e.text for e in store.mail.unread(team, "bob")] == ["m2", "m3", "m4"]
    live = store.mail.read_live(team, "bob")
    assert [(e.text, e.read) for e in live] == [("m0", True), ("m1", True), ("m2", False), ("m3", False), ("m4", False)]
    assert [e.text for e in store.mail.read_all(team, "bob")] == ["m0", "m1", "m2", "m3", "m4"]
    assert store.mail.inbox_owners(team) == ["bob"]
    with pytest.raises(NotFoundError):
        store.mail.send(team, "carol", "hi", sender="team-lead")
    with pytest.raises(AgentTeamsError, match="limit"):
        store.mail.send(team, "bob", "x" * (8 * 1024 * 1024 + 1), sender="team-lead")
    store.mail.remove_inbox(team, "bob")
    assert store.mail.unread(team, "bob") == []


def test_unacknowledged_messages_come_again_to_a_new_reader(store: Store, store_kind: str, config_root: Path) -> None:
    """A reader that crashed between reading and the model request: its successor (a new store) reads them again."""
    team = team_of(store)
    store.teams.add_member(team, NewMember("bob", cwd="/w"))
    store.mail.send(team, "bob", "first", sender="team-lead")
    assert [e.text for e in store.mail.unread(team, "bob")] == ["first"]
    again = _another(store, store_kind, config_root)
    store.mail.send(team, "bob", "second", sender="team-lead")
    assert [e.text for e in again.mail.unread(team, "bob")] == ["first", "second"]


def test_broadcast_reaches_everyone_but_the_sender(store: Store) -> None:
    team = team_of(store)
    for name in ("bob", "carol"):
        store.teams.add_member(team, NewMember(name, cwd="/w"))
    assert sorted(store.mail.broadcast(team, "all hands", sender="bob")) == ["carol", "team-lead"]
    assert [e.text for e in store.mail.unread(team, "carol")] == ["all hands"]
    assert store.mail.unread(team, "bob") == []


# -- tasks ---------------------------------------------------------------------------------------------


def test_tasks_ids_dependencies_and_cycles(store: Store) -> None:
    team = team_of(store)
    one = store.tasks.create(team, "one")
    two = store.tasks.create(team, "two", blocked_by=[one.id])
    assert (one.id, two.id) == ("1", "2") and two.blocked_by == ["1"]
    assert store.tasks.get(team, "1").blocks == ["2"]
    with pytest.raises(NotFoundError):
        store.tasks.create(team, "three", blocked_by=["9"])
    with pytest.raises(ConflictError, match="cycle"):
        store.tasks.update(team, "1", add_blocked_by=["2"])
    with pytest.raises(ConflictError):
        store.tasks.update(team, "1", add_blocks=["1"])
    claim = store.tasks.claim(team, "2", "alice")
    assert not claim.success and claim.reason == "blocked"
    result = store.tasks.update(team, "1", status="completed", metadata={"note": 1})
    assert "status" in result.updated and store.tasks.get(team, "1").metadata == {"note": 1}
    assert store.tasks.claim(team, "2", "alice").success
    store.tasks.delete(team, "2")
    assert store.tasks.get(team, "1").blocks == []
    assert store.tasks.create(team, "four").id == "3"  # an id is never handed out twice
    assert [t.id for t in store.tasks.list_tasks(team)] == ["1", "3"]


def test_claim_rules(store: Store) -> None:
    team = team_of(store)
    for subject in ("a", "b", "c"):
        store.tasks.create(team, subject)
    assert store.tasks.claim(team, "1", "alice").success
    taken = store.tasks.claim(team, "1", "bob")
    assert not taken.success and taken.reason == "already_claimed"
    busy = store.tasks.claim(team, "2", "alice", check_busy=True)
    assert not busy.success and busy.reason == "agent_busy" and busy.busy_with == ["1"]
    assert store.tasks.claim(team, "9", "bob").reason == "task_not_found"
    store.tasks.update(team, "3", status="completed")
    assert store.tasks.claim(team, "3", "bob").reason == "already_resolved"
    busy_next = store.tasks.claim_next(team, "alice", check_busy=True)
    assert not busy_next.success and busy_next.reason == "agent_busy" and busy_next.busy_with == ["1"]
    assert busy_next.task is not None and busy_next.task.id == "2"
    nxt = store.tasks.claim_next(team, "bob")
    assert nxt.success and nxt.task is not None and nxt.task.id == "2"
    moved = store.tasks.unassign_all(team, "alice")
    assert [t.id for t in moved.tasks] == ["1"]
    assert store.tasks.get(team, "1").owner is None and store.tasks.get(team, "1").status == "pending"


def test_claim_next_takes_the_lowest_unblocked_task(store: Store) -> None:
    team = team_of(store)
    first = store.tasks.create(team, "first")
    store.tasks.create(team, "after first", blocked_by=[first.id])
    store.tasks.create(team, "free")
    got = store.tasks.claim_next(team, "alice")
    assert got.success and got.task is not None and (got.task.id, got.task.owner) == ("1", "alice")
    got = store.tasks.claim_next(team, "bob")
    assert got.success and got.task is not None and got.task.id == "3"  # #2 waits for #1
    assert store.tasks.claim_next(team, "carol").reason == "task_not_found"
    store.tasks.update(team, "1", status="completed", assigned_by="alice")
    got = store.tasks.claim_next(team, "carol")
    assert got.success and got.task is not None and got.task.id == "2"


def test_claim_exactly_once_under_eight_processes(store: Store, tmp_path: Path) -> None:
    team = store.teams.create("race").name
    count = 40
    for i in range(count):
        store.tasks.create(team, f"t{i}")
    outs = run_workers(tmp_path, [["claim", f"agent{n}"] for n in range(8)])
    won = [(line.split()[1], f"agent{n}") for n, out in enumerate(outs) for line in out.splitlines()
           if line.startswith("won ")]  # fmt: skip
    assert sorted((i for i, _ in won), key=int) == [str(i) for i in range(1, count + 1)]  # each task once, none twice
    final = store.tasks.list_tasks(team)
    assert all(t.status == "in_progress" for t in final)
    assert {t.id: t.owner for t in final} == dict(won)  # owned by the one process that was told it won


def test_lease_expiry_and_fencing(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTTEAMS_LEASE_SECONDS", "0.5")
    team = team_of(store)
    store.tasks.create(team, "leased")
    store.presence.write(team, "alice", Presence(pid=os.getpid(), session_id="s", backend="in-process"))
    assert store.tasks.claim(team, "1", "alice").success
    store.tasks.renew_leases(team, "alice")
    assert store.tasks.sweep_leases(team) == []  # not run out yet
    wait_until(lambda: bool(store.tasks.sweep_leases(team)), 10, "the lease to run out and the task to be taken back")
    task = store.tasks.get(team, "1")
    assert task.owner is None and task.status == "pending"
    assert store.tasks.claim(team, "1", "bob").success
    with pytest.raises(LeaseLostError, match="taken back from you"):
        store.tasks.update(team, "1", status="completed", assigned_by="alice")
    with pytest.raises(LeaseLostError):
        store.tasks.check_lease(team, store.tasks.get(team, "1"), "alice")
    assert store.tasks.update(team, "1", status="completed", assigned_by="bob").updated == ["status"]
    assert store.tasks.get(team, "1").status == "completed"


def test_list_swept_gives_the_board_with_a_lease_run_out_taken_back(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TaskList's read: every task, a task whose owner of ours let its lease run out already back to pending, and
    what was taken back; no other task changes."""
    monkeypatch.setenv("AGENTTEAMS_LEASE_SECONDS", "0.5")
    team = team_of(store)
    for subject in ("leased", "bob's", "free"):
        store.tasks.create(team, subject)
    store.presence.write(team, "alice", Presence(pid=os.getpid(), session_id="s", backend="in-process"))
    assert store.tasks.claim(team, "1", "alice").success
    store.tasks.update(team, "2", owner="bob", status="in_progress")  # no lease: not ours to take back
    seen: list[tuple[list[Task], list[TakenBack]]] = []

    def taken_back() -> bool:
        seen.append(store.tasks.list_swept(team))
        return bool(seen[-1][1])

    wait_until(taken_back, 10, "alice's task taken back")
    listed, back = seen[-1]
    assert [(b.task.id, b.owner) for b in back] == [("1", "alice")]
    assert [(t.id, t.owner, t.status) for t in listed] == [
        ("1", None, "pending"), ("2", "bob", "in_progress"), ("3", None, "pending"),
    ]  # fmt: skip
    assert store.tasks.list_swept(team)[1] == []  # once


def test_a_silent_owner_loses_its_task_after_its_last_beat(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crashed agent stops beating: its presence record goes stale (files) or expires (Redis: after 1 s at this
    beat) before its lease (2 s) runs out, and its task must still come back."""
    monkeypatch.setenv("AGENTTEAMS_LEASE_SECONDS", "2")
    team = team_of(store)
    store.tasks.create(team, "orphaned")
    assert store.tasks.claim(team, "1", "alice").success
    store.presence.write(team, "alice", Presence(pid=os.getpid(), session_id="s", backend="tmux", heartbeat_ms=50))
    store.tasks.renew_leases(team, "alice")  # its one beat: the presence record and the lease renewal

    def quiet() -> bool:
        p = store.presence.read(team, "alice")
        return p is None or p.liveness() != "running"

    wait_until(quiet, 10, "alice's presence to go quiet")
    wait_until(lambda: bool(store.tasks.sweep_leases(team)), 10, "alice's task to be taken back")
    assert store.tasks.get(team, "1").owner is None


def test_a_claim_holds_a_lease_before_the_first_beat(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """An owner that dies between its claim and its first heartbeat: its task comes back when the lease runs out."""
    monkeypatch.setenv("AGENTTEAMS_LEASE_SECONDS", "0.5")
    team = team_of(store)
    store.tasks.create(team, "claimed, then the owner died")
    store.presence.write(team, "alice", Presence(pid=os.getpid(), session_id="s", backend="tmux"))
    assert store.tasks.claim(team, "1", "alice").success
    wait_until(lambda: bool(store.tasks.sweep_leases(team)), 3, "alice's task to be taken back")
    assert store.tasks.get(team, "1").owner is None


# -- presence and waiting ------------------------------------------------------------------------------


def test_presence_write_read_and_going_quiet(store: Store) -> None:
    team = team_of(store)
    assert store.presence.read(team, "alice") is None
    store.presence.write(team, "alice", Presence(pid=os.getpid(), session_id="s", backend="tmux", heartbeat_ms=100))
    found = store.presence.read(team, "alice")
    assert found is not None and found.session_id == "s" and found.updated_at > 0
    assert found.liveness() == "running"

    def quiet() -> bool:  # no beat since: expired (Redis) or unresponsive (files); either way not running
        p = store.presence.read(team, "alice")
        return p is None or p.liveness() != "running"

    wait_until(quiet, 10, "alice's silence to show")
    store.presence.remove(team, "alice")
    assert store.presence.read(team, "alice") is None


def test_watch_wakes_on_a_message_and_times_out_without_one(store: Store) -> None:
    team = team_of(store)
    store.teams.add_member(team, NewMember("bob", cwd="/w"))
    with store.watch(team, "bob") as waiter:
        started = time.monotonic()
        assert waiter.wait(0.3) is False
        assert time.monotonic() - started >= 0.25
        timer = threading.Timer(0.1, lambda: store.mail.send(team, "bob", "wake", sender="team-lead"))
        timer.start()
        started = time.monotonic()
        assert waiter.wait(10) is True
        assert time.monotonic() - started < 5
        timer.join()
        store.mail.send(team, "bob", "between waits", sender="team-lead")
        assert waiter.wait(5) is True  # sent before the wait began: not missed


def test_watch_wakes_on_a_wake_from_another_thread_and_on_a_readable_fd(store: Store) -> None:
    team = team_of(store)
    store.teams.add_member(team, NewMember("bob", cwd="/w"))
    with store.watch(team, "bob") as waiter:
        timer = threading.Timer(0.1, waiter.wake)
        timer.start()
        started = time.monotonic()
        assert waiter.wait(30) is True and time.monotonic() - started < 5
        timer.join()
        read, write = os.pipe()
        try:
            assert waiter.wait(0.2, fds=[read]) is False
            os.write(write, b"x")  # as a pidfd turns readable when its process ends
            started = time.monotonic()
            assert waiter.wait(30, fds=[read]) is True and time.monotonic() - started < 5
        finally:
            os.close(read)
            os.close(write)


def test_watch_with_tasks_wakes_on_a_task_change(store: Store) -> None:
    team = team_of(store)
    with store.watch(team, "bob", tasks=True) as waiter:
        store.tasks.create(team, "new work")
        assert waiter.wait(5) is True


def _another(store: Store, kind: str, config_root: Path) -> Store:
    from agentteams.store.file.store import FileStore
    from agentteams.store.paths import Layout
    from agentteams.store.redis.connection import parse_url
    from agentteams.store.redis.store import RedisStore

    return RedisStore(parse_url(os.environ["AGENTTEAMS_STORE"])) if kind == "redis" else FileStore(Layout(config_root))
