"""Faults: writers SIGKILLed mid-write, lock dirs left by dead holders (ours and the real CLI's), live
foreign holders, long holds that must be refreshed, and lock timeouts.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from pathlib import Path

import pytest

from agentteams.errors import LockTimeoutError
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.locking import (
    LOCK_DIR_MODE,
    REFRESH_SECONDS,
    STALE_SECONDS,
    FileLock,
    lock_dir_for,
    locked,
    queue_file_for,
)
from agentteams.store.paths import Layout
from tests.support.wait import wait_until
from tests.support.workers import Pool, Worker

TEAM = "crash"


@pytest.fixture
def team(config_root: Path) -> str:
    store = TeamStore()
    store.create(TEAM)
    store.add_member(TEAM, NewMember(name="alice"))
    Mailbox().send(TEAM, "alice", "first", sender="team-lead")  # the inbox exists from here on
    return TEAM


# -- SIGKILL at random moments --------------------------------------------------------------------------

SENDERS, TASKERS, JOINERS = 6, 2, 2
ROUNDS = 6


def test_sigkilled_writers_leave_valid_files_and_lose_no_acked_message(
    team: str, layout: Layout, config_root: Path, pool: Pool
) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    tasks = TaskStore()
    task_ids = [tasks.create(team, f"shared {n}").id for n in range(4)]
    inbox, config_file = layout.inbox_file(team, "alice"), layout.config_file(team)
    task_dir = layout.task_dir(team)
    stop = pool.dir / "stop-checker"
    checker = pool.spawn_ready("checker", "check", str(inbox), str(config_file), str(task_dir), str(stop), "--ready")

    slots = [f"s{i}" for i in range(SENDERS)] + [f"t{i}" for i in range(TASKERS)]
    slots += [f"j{i}" for i in range(JOINERS)]
    incarnations: dict[str, int] = dict.fromkeys(slots, 0)
    everyone: list[Worker] = []

    def start(slot: str) -> Worker:
        incarnations[slot] += 1
        name = f"{slot}r{incarnations[slot]}"
        if slot.startswith("s"):
            args = ["send", team, "alice", name, "-1"]
        elif slot.startswith("t"):
            args = ["taskloop", team, name, ",".join(task_ids)]
        else:
            args = ["joinloop", team, name]
        worker = pool.spawn(name, *args)
        everyone.append(worker)
        return worker

    live = {slot: start(slot) for slot in slots}
    killed: list[Worker] = []

    def all_working() -> bool:
        for w in live.values():
            assert w.proc.poll() is None, f"{w.name} died on its own (seed {seed}):\n{w.stderr()}"
        return all(w.lines() for w in live.values())

    for n in range(ROUNDS + 1):
        wait_until(all_working, 60, "every worker to be writing", interval=0.02)
        time.sleep(rng.uniform(0.0, 0.5))  # the fault schedule (a random moment), not synchronisation
        last = n == ROUNDS  # in the last round every writer dies mid-stream
        for slot in slots if last else rng.sample(slots, rng.randint(1, 4)):
            live[slot].kill()
            killed.append(live[slot])
            if not last:
                live[slot] = start(slot)

    for worker in everyone:
        assert "Traceback" not in worker.stderr(), f"{worker.name} failed (seed {seed}):\n{worker.stderr()}"

    # a lock dir a killed holder of ours left is broken at once, not after the 10 s stale time: write
    # through every lock the workers used
    fresh = pool.spawn("fresh-sender", "send", team, "alice", "fresh", "1")
    start_time = time.monotonic()
    assert fresh.finish(timeout=30) == ["ack 0"]
    send_took = time.monotonic() - start_time
    start_time = time.monotonic()
    for tid in task_ids:
        tasks.update(team, tid, description="after the kills")
    tasks.create(team, "after the kills")
    TeamStore().add_member(team, NewMember(name="after"))
    rest_took = time.monotonic() - start_time
    assert send_took < 5.0, f"a fresh sender took {send_took:.1f}s after the kills"
    assert rest_took < 5.0, f"task updates, a create and a join took {rest_took:.1f}s after the kills"
    left = [p for p in config_root.rglob("*.lock") if p.is_dir()]
    assert not left, f"lock dirs still there after writing through them: {left}"

    stop.touch()
    check = checker.finish(timeout=30)
    bad = [line for line in check if line.startswith("BAD")]
    assert not bad, f"a reader saw a broken file (seed {seed}): {bad[:3]}"
    reads = int(check[-1].split()[1])
    assert reads > 500, f"the checker read only {reads} times"

    # the final files are valid, nothing was quarantined
    items = json.loads(inbox.read_bytes().decode("utf-8"))
    assert len(Mailbox().read_live(team, "alice")) == len(items)
    config = TeamStore().read(team)
    on_disk = {t.id for t in tasks.list_tasks(team)}
    assert not list(config_root.rglob("*.corrupt-*"))

    # every message whose send returned is in the inbox, once
    texts = [m["text"] for m in items]
    assert len(set(texts)) == len(texts), "a message was committed twice"
    assert len({m["msg_id"] for m in items}) == len(items)
    acked = {f"{w.name}:{line.split()[1]}" for w in everyone for line in w.lines() if line.startswith("ack ")}
    assert len(acked) > 100, f"only {len(acked)} sends completed"
    missing = acked - set(texts)
    assert not missing, f"{len(missing)} acknowledged messages lost (seed {seed}): {sorted(missing)[:5]}"

    # every task whose creation returned exists; each joiner's last acknowledged member is still there
    created = {line.split()[1] for w in everyone for line in w.lines() if line.startswith("created ")}
    assert created, "no task was created"
    assert created <= on_disk
    names = {m.name for m in config.members}
    for w in everyone:
        joined = [line.split()[1] for line in w.lines() if line.startswith("joined ")]
        if joined:
            assert joined[-1] in names, f"{w.name}'s member {joined[-1]} vanished (seed {seed})"


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_lock_dir_of_a_killed_holder_of_ours_is_broken_at_once(team: str, layout: Layout, pool: Pool) -> None:
    task = TaskStore().create(team, "a task")
    targets = {
        "inbox": layout.inbox_file(team, "alice"),
        "config": layout.config_file(team),
        "task": layout.task_file(team, task.id),
    }
    for kind, target in targets.items():
        holder = pool.spawn_ready(f"hold-{kind}", "hold", str(target), "600")
        holder.kill()
        assert lock_dir_for(target).is_dir()
    # a holder killed between its mkdir and writing its record leaves a lock dir no record names
    queue_file_for(targets["task"]).write_bytes(b"")
    lock_dir_for(targets["task"]).rmdir()
    os.mkdir(lock_dir_for(targets["task"]), LOCK_DIR_MODE)
    start = time.monotonic()
    Mailbox().send(team, "alice", "after", sender="team-lead")
    TeamStore().add_member(team, NewMember(name="bob"))
    TaskStore().update(team, task.id, status="in_progress")
    took = time.monotonic() - start
    assert took < 2.0, f"three writes past orphaned locks took {took:.1f}s"
    for target in targets.values():
        assert not lock_dir_for(target).exists()


# -- foreign (real CLI) lock dirs -----------------------------------------------------------------------


def test_lock_dir_of_a_killed_foreign_holder_is_broken_once_stale(team: str, layout: Layout, pool: Pool) -> None:
    inbox = layout.inbox_file(team, "alice")
    lock_dir = lock_dir_for(inbox)
    holder = pool.spawn_ready("foreign", "foreignlock", str(lock_dir))
    holder.kill()
    made = lock_dir.stat().st_mtime
    Mailbox().send(team, "alice", "after the stale lock", sender="team-lead")
    elapsed = time.time() - made
    assert STALE_SECONDS - 1.0 <= elapsed <= STALE_SECONDS + 4.0, f"send completed {elapsed:.1f}s after mkdir"
    assert "after the stale lock" in [e.text for e in Mailbox().read_live(team, "alice")]
    assert not lock_dir.exists()


HOLD_SECONDS = 11.5  # past the stale time, inside our default 15 s deadline


def test_a_live_foreign_holder_delays_our_write_until_it_releases(team: str, layout: Layout, pool: Pool) -> None:
    inbox = layout.inbox_file(team, "alice")
    lock_dir = lock_dir_for(inbox)
    release = pool.dir / "release"
    holder = pool.spawn_ready("foreign", "foreignlock", "--refresh", "--release", str(release), str(lock_dir))
    done = threading.Event()
    errors: list[BaseException] = []

    def send() -> None:
        try:
            Mailbox().send(team, "alice", "waited", sender="team-lead")
        except BaseException as e:
            errors.append(e)
        finally:
            done.set()

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    held_until = time.monotonic() + HOLD_SECONDS
    while time.monotonic() < held_until:
        assert lock_dir.is_dir(), "the foreign lock dir vanished while its holder was alive"
        assert not done.is_set(), f"our send completed while a live foreign holder held the lock: {errors}"
        time.sleep(0.02)
    release.touch()
    released = time.monotonic()
    assert holder.finish(timeout=10) == ["released"]
    wait_until(done.is_set, 5, "our send to complete after the foreign holder released")
    assert not errors, errors
    assert time.monotonic() - released < 5
    assert "waited" in [e.text for e in Mailbox().read_live(team, "alice")]


def test_our_long_hold_is_refreshed_so_it_never_looks_stale(team: str, layout: Layout, pool: Pool) -> None:
    target = layout.inbox_file(team, "alice")
    lock_dir = lock_dir_for(target)
    stop = pool.dir / "stop"
    holder = pool.spawn_ready("holder", "hold", str(target), "12")
    watcher = pool.spawn_ready("watcher", "stalecheck", str(lock_dir), str(stop))
    assert holder.finish(timeout=30) == ["released"]
    stop.touch()
    (line,) = watcher.finish(timeout=10)
    _, oldest, _, samples, _, stale = line.split()
    assert int(samples) > 200, f"the watcher looked only {samples} times"
    assert int(stale) == 0, f"a foreign waiter saw our held lock as stale ({line})"
    assert float(oldest) < STALE_SECONDS
    assert float(oldest) < REFRESH_SECONDS + 3, f"our lock went {oldest}s without a refresh"
    assert not lock_dir.exists()


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_lock_timeout_error_names_the_lock(team: str, layout: Layout, pool: Pool) -> None:
    target = layout.config_file(team)
    lock_dir = lock_dir_for(target)
    release = pool.dir / "release"
    holder = pool.spawn_ready("foreign", "foreignlock", "--refresh", "--release", str(release), str(lock_dir))
    start = time.monotonic()
    with pytest.raises(LockTimeoutError) as caught:
        FileLock(target, deadline=1.0).acquire()
    took = time.monotonic() - start
    assert 1.0 <= took < 3.0
    message = str(caught.value)
    assert str(lock_dir) in message
    assert "timed out after 1s" in message
    assert lock_dir.is_dir(), "the timed-out waiter removed a live holder's lock"
    release.touch()
    assert holder.finish(timeout=10) == ["released"]
    with locked(target, deadline=5.0):  # the failed attempt left nothing behind that blocks the next
        assert lock_dir.is_dir()
    assert not lock_dir.exists()
