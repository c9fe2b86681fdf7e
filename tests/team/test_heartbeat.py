"""Heartbeats in process (issue 14, item 8): what a presence record says of its agent, the one heartbeat thread,
a teammate whose idle loop has stalled going silent, and the lead reporting a silent teammate (and its return)
without taking its tasks. The real SIGSTOPped process is tests/faults/test_heartbeat.py."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from pathlib import Path

import pytest

from agentteams.pids import pid_space
from agentteams.store.fs.atomic_json import atomic_write_json, epoch_ms
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence, read_presence
from agentteams.team import heartbeat
from agentteams.team.heartbeat import Heartbeat
from tests.support.fake_model import FakeModel
from tests.support.runtime import Events, quick_polls, running_lead, teammate_rig
from tests.support.wait import wait_until

NOT_A_PID = 2**22 + 12345  # above the kernel's pid limit: no such process


def record(pid: int = 0, *, state: str = "idle", beat_ms: int = 100, silent_ms: int = 0) -> Presence:
    return Presence(pid=pid or os.getpid(), session_id="s", backend="process", state=state,  # type: ignore[arg-type]
                    updated_at=epoch_ms() - silent_ms, heartbeat_ms=beat_ms)  # fmt: skip


def test_what_a_record_says_of_its_agent() -> None:
    assert record().liveness() == "running"
    assert record(silent_ms=300).liveness() == "running"  # three beats missed: not yet
    assert record(silent_ms=500).liveness() == "unresponsive"
    assert record(beat_ms=0, silent_ms=10**9).liveness() == "running"  # a writer that never beats is never judged
    assert record(NOT_A_PID).liveness() == "dead"
    assert record(state="exited").liveness() == "exited"  # even if its pid is reused


def test_an_agent_on_another_machine_is_judged_by_its_beats_not_by_a_pid_here() -> None:
    """A node's teammate writes its own machine's pid: the lead's machine has no such process, or another one."""
    remote = dataclasses.replace(record(NOT_A_PID), pid_space="elsewhere#pid:[4026531836]")
    assert remote.liveness() == "running"
    assert dataclasses.replace(remote, updated_at=epoch_ms() - 500).liveness() == "unresponsive"
    assert dataclasses.replace(remote, state="exited").liveness() == "exited"
    back = Presence.from_json(json.loads(json.dumps(remote.to_json())))
    assert back is not None and back.pid_space == remote.pid_space and back.liveness() == "running"
    assert record().pid_space == pid_space()  # ours: this machine's


def test_one_thread_beats_every_agent_and_ends_with_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(heartbeat.ENV_VAR, "0.1")
    beats = Heartbeat()
    counts = [0, 0]

    def counter(i: int) -> heartbeat.Beat:
        def beat() -> None:
            counts[i] += 1

        return beat

    others = {t for t in threading.enumerate() if t.name == "heartbeat"}  # left by an earlier test, still ending
    stops = [beats.add(counter(i)) for i in range(2)]
    wait_until(lambda: min(counts) >= 3, 5, "three beats each")
    assert len({t for t in threading.enumerate() if t.name == "heartbeat"} - others) == 1
    for stop in stops:
        stop()
    wait_until(lambda: beats._thread is None, 5, "the heartbeat thread to end")


def test_the_interval_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(heartbeat.ENV_VAR, "2.5")
    assert heartbeat.interval() == 2.5
    monkeypatch.setenv(heartbeat.ENV_VAR, "soon")
    assert heartbeat.interval() == heartbeat.DEFAULT_SECONDS
    monkeypatch.setenv(heartbeat.ENV_VAR, "0")
    assert heartbeat.interval() == 0.1


def test_the_lead_reports_a_silent_teammate_once_and_its_return(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(heartbeat.ENV_VAR, "0.1")
    quick_polls(monkeypatch)
    events = Events()
    with running_lead(layout, tmp_path, FakeModel([]), "alice", events=events) as lead:
        task = lead.tasks.create(lead.team, "hers")
        lead.tasks.update(lead.team, task.id, owner="alice", status="in_progress")
        path = layout.presence_file(lead.team, "alice")
        atomic_write_json(path, record(silent_ms=5000).to_json())  # a process that exists and beats no more
        wait_until(lambda: "unresponsive" in events.kinds("alice"), 5, "the lead to report alice")
        [said] = [e.text for e in events.items if e.kind == "unresponsive"]
        assert said.startswith("Teammate alice has not responded for ") and str(os.getpid()) in said
        assert "alice" in lead.members() and lead.tasks.get(lead.team, task.id).owner == "alice"
        lead_record = read_presence(layout, lead.team, "team-lead")
        assert lead_record is not None and lead_record.liveness() == "running" and lead_record.heartbeat_ms == 100
        atomic_write_json(path, record(beat_ms=60_000).to_json())  # beating again (slowly: it stays fresh)
        wait_until(lambda: "responsive" in events.kinds("alice"), 5, "the lead to see alice back")
        time.sleep(0.3)  # a few more beats of the lead: nothing more to report (a quiet period, not a sync)
        assert events.kinds("alice").count("unresponsive") == 1


def test_a_teammate_whose_idle_loop_stalls_stops_beating(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(heartbeat.ENV_VAR, "0.1")
    own = teammate_rig(layout, tmp_path, FakeModel([])).runtime._own  # not started: the test plays its loop
    assert own.record.heartbeat_ms == 100
    assert not own.beat()
    assert read_presence(layout, "proj", "alice") is None  # still starting: the first write is kept off the spawn
    own.write(state="idle")
    own.came_round()
    beat = own.record.updated_at
    time.sleep(0.01)  # the next write's epoch ms must differ
    assert own.beat() and own.record.updated_at > beat  # the loop came round lately: it beats
    assert not own.beat(when_due=True)  # the heartbeat thread's own pace: not due yet
    own._came_round = time.monotonic() - 60  # as if the loop had hung a minute ago
    assert not own.beat()  # no beat from a stalled loop: it goes unresponsive
    own.in_turn = True  # inside a turn a long model answer or tool run is no stall
    assert own.beat()
    own.write(state="exited")
    assert not own.beat()  # an exited agent's record is never beaten back to life
