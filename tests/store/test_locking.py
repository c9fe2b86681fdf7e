"""The lock protocol in one process: every wait has a deadline (the kernel queue's too), a stuck queue holder is
passed once its lock is stale, and a write under a lock another process broke is refused and redone."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from agentteams.errors import LockLostError, LockTimeoutError
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs import atomic_json as atomicjson
from agentteams.store.fs import lock_queue as lockqueue
from agentteams.store.fs.locking import (
    LOCK_DIR_MODE,
    STALE_SECONDS,
    FileLock,
    _held_stack,
    check_held,
    flock_exclusive,
    flock_release,
    lock_dir_for,
    queue_file_for,
)
from agentteams.store.paths import Layout
from tests.support import ccref

TEAM = "locks"


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "thing.json"
    path.write_text("[]")
    return path


@pytest.fixture
def stuck_queue(target: Path) -> Iterator[IO[bytes]]:
    """The queue's flock held by a holder that never lets go (as one SIGSTOPped inside it)."""
    with open(queue_file_for(target), "a+b") as fh:
        flock_exclusive(fh)
        yield fh
        flock_release(fh)


def _acquire_in_thread(lock: FileLock, wait: float) -> tuple[bool, BaseException | None, float]:
    """(finished, error, seconds): a thread, so that a wait with no deadline fails the test instead of hanging it."""
    out: list[BaseException | None] = []
    start = time.monotonic()

    def run() -> None:
        try:
            lock.acquire()
            out.append(None)
        except BaseException as e:
            out.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(wait)
    return bool(out), (out[0] if out else None), time.monotonic() - start


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_the_kernel_queue_wait_has_a_deadline(target: Path, stuck_queue: IO[bytes]) -> None:
    cpu = time.process_time()
    finished, error, took = _acquire_in_thread(FileLock(target, deadline=0.5), wait=5.0)
    assert finished, "the wait behind a held queue had no deadline"
    assert isinstance(error, LockTimeoutError), error
    assert 0.5 <= took < 2.0
    assert time.process_time() - cpu < 0.1 * took, "the waiter spun instead of sleeping"
    assert str(error).startswith(f"timed out after 0.5s waiting for lock {lock_dir_for(target)} ")
    assert "\n" not in str(error)


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_a_waiter_that_gave_up_leaves_the_queue_free_once_its_holder_lets_go(target: Path) -> None:
    with open(queue_file_for(target), "a+b") as holder:
        flock_exclusive(holder)
        with pytest.raises(LockTimeoutError):
            FileLock(target, deadline=0.3).acquire()
        flock_release(holder)
    # the waiter's thread got the queue after its caller had gone, and let it go at once
    finished, error, took = _acquire_in_thread(lock := FileLock(target, deadline=5.0), wait=5.0)
    assert finished and error is None, error
    assert took < 1.0
    lock.release()


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_a_stale_lock_dir_behind_a_stuck_queue_holder_is_taken(target: Path, stuck_queue: IO[bytes]) -> None:
    lock_dir = lock_dir_for(target)
    os.mkdir(lock_dir, LOCK_DIR_MODE)
    old = time.time() - STALE_SECONDS - 5
    os.utime(lock_dir, (old, old))
    lock = FileLock(target, deadline=5.0)
    finished, error, took = _acquire_in_thread(lock, wait=5.0)
    assert finished and error is None, error
    assert took < 1.0, f"took {took:.1f}s past a stale lock"
    assert lock.still_held()
    assert not lock_dir.stat().st_mode & 0o1000, "a waiter past the queue made a dir the queue holder would break"
    lock.release()
    assert not lock_dir.exists()


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_a_queue_held_for_the_staleness_period_is_passed(
    target: Path, stuck_queue: IO[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lockqueue, "STALE_SECONDS", 0.3)  # a holder stuck before its mkdir: no lock dir at all
    lock = FileLock(target, deadline=5.0)
    finished, error, took = _acquire_in_thread(lock, wait=5.0)
    assert finished and error is None, error
    assert 0.3 <= took < 2.0
    lock.release()


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_a_queue_holder_whose_lock_was_broken_while_stopped_is_passed_at_once(
    target: Path, stuck_queue: IO[bytes]
) -> None:
    # its record of the lock it held, last refreshed long ago; the lock dir itself already broken and gone
    then = time.time_ns() - int((STALE_SECONDS + 5) * 1e9)
    stuck_queue.write(f"{os.getpid()} 12345 {then}\n".encode())
    stuck_queue.flush()
    lock = FileLock(target, deadline=5.0)
    finished, error, took = _acquire_in_thread(lock, wait=5.0)
    assert finished and error is None, error
    assert took < 1.0, f"took {took:.1f}s past a holder known to be stuck"
    lock.release()


def test_a_broken_lock_is_not_ours_and_is_left_to_its_new_holder(target: Path) -> None:
    lock = FileLock(target)
    lock.acquire()
    lock_dir = lock_dir_for(target)
    os.rmdir(lock_dir)  # broken as stale by another writer, which then takes it
    os.mkdir(lock_dir)
    old = time.time() - 3
    os.utime(lock_dir, (old, old))
    assert not lock.still_held()
    with pytest.raises(LockLostError) as caught:
        lock.ensure_held()
    assert str(lock_dir) in str(caught.value) and "\n" not in str(caught.value)
    lock.refresh()
    assert abs(lock_dir.stat().st_mtime - old) < 0.01, "our refresh kept the new holder's lock fresh"
    lock.release()
    assert lock_dir.is_dir(), "our release removed the new holder's lock"
    assert not _held_stack()


def test_a_write_under_a_broken_lock_is_refused(target: Path) -> None:
    with FileLock(target):
        os.rmdir(lock_dir_for(target))
        with pytest.raises(LockLostError):
            atomicjson.atomic_write_bytes(target, b'["stale"]')
    assert target.read_text() == "[]"
    assert not list(target.parent.glob("*.tmp.*")), "the temporary file was left behind"


# -- every read-modify-write redoes its change on fresh data ------------------------------------------------


def _break_once(monkeypatch: pytest.MonkeyPatch, breaker: Callable[[FileLock], None]) -> list[int]:
    """Before our first replace under a lock, `breaker` breaks that lock (as stale) and writes as another
    process would; returns a list that counts the checks made."""
    real = check_held
    calls: list[int] = []

    def check() -> None:
        calls.append(1)
        if len(calls) == 1:
            lock = _held_stack()[-1]
            os.rmdir(lock.lock_dir)
            breaker(lock)
        real()

    monkeypatch.setattr(atomicjson, "check_held", check)
    return calls


@pytest.fixture
def team(config_root: Path) -> str:
    TeamStore().create(TEAM)
    TeamStore().add_member(TEAM, NewMember(name="alice"))
    return TEAM


def test_a_send_whose_lock_was_broken_keeps_the_breakers_message(
    team: str, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    Mailbox().send(team, "alice", "first", sender="team-lead")

    def their_send(lock: FileLock) -> None:
        ccref.send(lock.target, "claude", "theirs")

    calls = _break_once(monkeypatch, their_send)
    Mailbox().send(team, "alice", "ours", sender="team-lead")
    assert len(calls) >= 2
    assert [e.text for e in Mailbox().read_live(team, "alice")] == ["first", "theirs", "ours"]
    assert not lock_dir_for(layout.inbox_file(team, "alice")).exists()


def test_a_join_whose_lock_was_broken_keeps_the_breakers_member(team: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def their_join(config: Any) -> Any:
        return {**config, "members": [*config["members"], {**config["members"][-1], "name": "carol"}]}

    _break_once(monkeypatch, lambda lock: ccref.locked_update(lock.target, their_join))
    TeamStore().add_member(team, NewMember(name="bob"))
    assert [m.name for m in TeamStore().read(team).members] == ["team-lead", "alice", "carol", "bob"]


def test_a_task_update_whose_lock_was_broken_keeps_the_breakers_change(
    team: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = TaskStore()
    task = tasks.create(team, "shared")
    _break_once(monkeypatch, lambda lock: ccref.locked_update(lock.target, lambda t: {**t, "owner": "carol"}))
    result = tasks.update(team, task.id, description="ours")
    assert (result.task.owner, result.task.description) == ("carol", "ours")
    assert (tasks.get(team, task.id).owner, tasks.get(team, task.id).description) == ("carol", "ours")


def test_a_task_create_whose_list_lock_was_broken_takes_the_next_id(
    team: str, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = TaskStore()
    first = tasks.create(team, "one")

    def their_create(lock: FileLock) -> None:
        path = layout.task_file(team, "2")
        theirs = {**json.loads(layout.task_file(team, first.id).read_text()), "id": "2", "subject": "theirs"}
        path.write_text(json.dumps(theirs))

    _break_once(monkeypatch, their_create)
    ours = tasks.create(team, "ours")
    assert ours.id == "3"
    assert [(t.id, t.subject) for t in tasks.list_tasks(team)] == [("1", "one"), ("2", "theirs"), ("3", "ours")]
