"""Faults: a process of ours SIGSTOPped while it holds a lock. Others wait for it about the staleness period, never
the whole stop; when one of them breaks its lock, the stopped writer's stale read never overwrites their write."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.locking import STALE_SECONDS, lock_dir_for
from agentteams.store.paths import Layout
from tests.support import ccref
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger
from tests.support.wait import wait_until
from tests.support.workers import Pool, Worker

TEAM = "stops"
SLACK = 5.0  # beyond the staleness period: a CLI's start-up and a loaded machine


@pytest.fixture
def inbox(config_root: Path, layout: Layout) -> Path:
    TeamStore().create(TEAM)
    TeamStore().add_member(TEAM, NewMember(name="alice"))
    Mailbox().send(TEAM, "alice", "first", sender="team-lead")  # the inbox exists from here on
    return layout.inbox_file(TEAM, "alice")


def _stopped(worker: Worker) -> bool:
    stat = Path(f"/proc/{worker.proc.pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"


def _stop(worker: Worker, ledger: FaultLedger) -> None:
    os.kill(worker.proc.pid, signal.SIGSTOP)
    ledger.faults += 1
    wait_until(lambda: _stopped(worker), 10, f"{worker.name} to be stopped")


def _resume(worker: Worker) -> None:
    os.kill(worker.proc.pid, signal.SIGCONT)


def _wait_stopped_mid_write(worker: Worker, ledger: FaultLedger) -> None:
    """The worker stops itself (`stopping`, then SIGSTOP) inside its lock, between its read and its write."""

    def stopped() -> bool:
        if worker.proc.poll() is not None:
            raise AssertionError(f"{worker.name} exited: {worker.stderr()}")
        return "stopping" in worker.lines() and _stopped(worker)

    wait_until(stopped, 30, f"{worker.name} to stop itself inside the lock")
    ledger.faults += 1


def _wait_stale(lock_dir: Path) -> None:
    wait_until(lambda: time.time() - lock_dir.stat().st_mtime > STALE_SECONDS + 0.2, STALE_SECONDS + 10, "stale lock")


def _tally(ledger: FaultLedger, texts: list[str], expected: list[str]) -> None:
    """Count into the ledger the expected messages missing from `texts` and those present more than once."""
    seen = Counter(texts)
    ledger.lost += sum(1 for t in expected if seen[t] == 0)
    ledger.duplicates += sum(seen[t] - 1 for t in expected if seen[t] > 1)


def test_a_stopped_holder_delays_our_send_by_the_staleness_period_not_the_stop(
    inbox: Path, cli: Cli, pool: Pool, ledger: FaultLedger
) -> None:
    release = pool.dir / "release"
    holder = pool.spawn_ready("holder", "hold", "--release", str(release), str(inbox), "600")
    _stop(holder, ledger)
    start = time.monotonic()
    sent = cli("msg", "send", TEAM, "alice", "past the stopped holder", timeout=STALE_SECONDS + 3 * SLACK)
    took = time.monotonic() - start
    ledger.writes += 1
    assert sent.returncode == 0, sent.stderr
    assert took < STALE_SECONDS + SLACK, f"the send waited {took:.1f}s behind a stopped holder"
    # its lock is broken and released now, but it still holds our queue: the next send does not wait again
    start = time.monotonic()
    again = cli("msg", "send", TEAM, "alice", "again", timeout=STALE_SECONDS + 3 * SLACK)
    took = time.monotonic() - start
    ledger.writes += 1
    assert again.returncode == 0, again.stderr
    assert took < SLACK, f"the second send waited {took:.1f}s behind the same stopped holder"
    assert _stopped(holder), "the holder was resumed before the sends finished"
    release.touch()
    _resume(holder)
    assert holder.finish(timeout=20) == ["released"]
    _tally(ledger, [e.text for e in Mailbox().read_live(TEAM, "alice")], ["first", "past the stopped holder", "again"])
    assert not lock_dir_for(inbox).exists(), "a lock dir was left behind"


def test_a_lock_broken_by_the_real_clis_rule_loses_no_message(inbox: Path, pool: Pool, ledger: FaultLedger) -> None:
    ours = pool.spawn("ours", "stopsend", TEAM, "alice", "ours")
    _wait_stopped_mid_write(ours, ledger)
    _wait_stale(lock_dir_for(inbox))
    claude = pool.spawn("claude", "ccsend", str(inbox), "claude", "1")  # breaks the stale lock, appends, releases
    ledger.faults += 1
    (line,) = claude.finish(timeout=30)
    assert line.startswith("ok 0"), line
    _resume(ours)
    assert ours.finish(timeout=30) == ["stopping", "ack 0"]
    ledger.writes += 2
    _tally(ledger, [e.text for e in Mailbox().read_live(TEAM, "alice")], ["first", "ours:0", "claude:0"])
    assert "redoing" in ours.stderr() or "committing again" in ours.stderr(), ours.stderr()
    assert not lock_dir_for(inbox).exists()


def test_a_lock_broken_by_our_own_send_loses_no_message(inbox: Path, cli: Cli, pool: Pool, ledger: FaultLedger) -> None:
    ours = pool.spawn("stopped", "stopsend", TEAM, "alice", "stopped")
    _wait_stopped_mid_write(ours, ledger)
    start = time.monotonic()
    sent = cli("msg", "send", TEAM, "alice", "from the cli", timeout=STALE_SECONDS + 3 * SLACK)
    took = time.monotonic() - start
    assert sent.returncode == 0, sent.stderr
    assert took < STALE_SECONDS + SLACK, f"the send waited {took:.1f}s behind a stopped holder"
    ledger.faults += 1  # it broke the stopped writer's lock
    _resume(ours)
    assert ours.finish(timeout=30) == ["stopping", "ack 0"]
    ledger.writes += 2
    _tally(ledger, [e.text for e in Mailbox().read_all(TEAM, "alice")], ["first", "stopped:0", "from the cli"])
    assert not lock_dir_for(inbox).exists()


def test_a_config_lock_broken_mid_join_loses_no_member(
    inbox: Path, layout: Layout, pool: Pool, ledger: FaultLedger
) -> None:
    config = layout.config_file(TEAM)
    ours = pool.spawn("ours", "stopjoin", TEAM, "bob")
    _wait_stopped_mid_write(ours, ledger)
    _wait_stale(lock_dir_for(config))
    claude = pool.spawn("claude", "ccjoin", str(config), "carol")
    ledger.faults += 1
    assert claude.finish(timeout=30) == ["joined carol"]
    _resume(ours)
    assert ours.finish(timeout=30) == ["stopping", "joined bob"]
    ledger.writes += 2
    names = [m.name for m in TeamStore().read(TEAM).members]
    _tally(ledger, names, ["team-lead", "alice", "bob", "carol"])
    assert not lock_dir_for(config).exists()


def test_a_task_lock_broken_mid_update_loses_no_change(
    inbox: Path, layout: Layout, pool: Pool, ledger: FaultLedger
) -> None:
    task = TaskStore().create(TEAM, "shared")
    path = layout.task_file(TEAM, task.id)
    ours = pool.spawn("ours", "stopupdate", TEAM, task.id, "ours")
    _wait_stopped_mid_write(ours, ledger)
    _wait_stale(lock_dir_for(path))
    ccref.locked_update(path, lambda t: {**t, "owner": "carol"})  # the real CLI's rule: breaks the stale lock
    ledger.faults += 1
    _resume(ours)
    assert ours.finish(timeout=30) == ["stopping", "updated"]
    ledger.writes += 2
    after = TaskStore().get(TEAM, task.id)
    ledger.lost += (after.owner != "carol") + (after.description != "ours")
    assert not lock_dir_for(path).exists()
