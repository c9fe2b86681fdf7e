"""Idle agents wake for events, not on a clock: a WakeEvent ends a watcher's wait or a model call's wait at once, a
pidfd (a process's end) wakes a watcher, an idle teammate's stop flag ends its 5 s round at once, and the lead's
team-thread wait ticks four times less often only while every teammate's end is an event."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentteams.pids import proc_start
from agentteams.store.fs import watch
from agentteams.store.fs.watch import FileWatcher, WakeEvent, interrupted_first, wait_in_slices
from agentteams.store.paths import Layout
from agentteams.team import heartbeat
from agentteams.team.lead import team_wait as teamwait
from agentteams.team.lead.team_wait import TeamWait
from agentteams.team.spawn.base import Handle
from agentteams.team.teammate import runtime as teammate_module
from tests.support.fake_model import FakeModel
from tests.support.runtime import running_teammate, teammate_rig
from tests.support.wait import wait_until


def _later(seconds: float, action: object) -> threading.Timer:
    timer = threading.Timer(seconds, action)  # type: ignore[arg-type]
    timer.start()
    return timer


def test_a_wake_event_ends_a_watcher_s_long_wait_at_once(tmp_path: Path) -> None:
    stop = WakeEvent()
    with FileWatcher([tmp_path / "inbox.json"]) as watcher:
        _later(0.2, stop.set)
        started = time.monotonic()
        assert wait_in_slices(watcher, stop, 30.0, 10) is False  # stopped, not news
        assert time.monotonic() - started < 5.0  # not the 300 s the slices add up to
        stop.clear()
        assert wait_in_slices(watcher, stop, 0.05, 2) is False  # the wake was used up: a quiet wait times out
        _later(0.2, lambda: (tmp_path / "inbox.json").write_text("[]"))
        assert wait_in_slices(watcher, stop, 30.0, 10) is True  # news ends it too


def test_a_plain_stop_flag_is_still_looked_at_between_slices(tmp_path: Path) -> None:
    stop = threading.Event()
    with FileWatcher([tmp_path / "inbox.json"]) as watcher:
        _later(0.2, stop.set)
        started = time.monotonic()
        assert wait_in_slices(watcher, stop, 0.1, 200) is False
        assert time.monotonic() - started < 5.0


def test_a_process_s_end_wakes_a_watcher_through_its_pidfd(tmp_path: Path) -> None:
    import os

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    fd = os.pidfd_open(child.pid)
    try:
        with FileWatcher([tmp_path / "inbox.json"]) as watcher:
            started = time.monotonic()
            assert watcher.wait(30.0, fds=[fd]) is True
            assert time.monotonic() - started < 10.0
    finally:
        os.close(fd)
        child.wait()


def test_the_poll_fallback_is_woken_too(tmp_path: Path) -> None:
    with FileWatcher([tmp_path / "inbox.json"], mode="poll") as watcher:
        _later(0.2, watcher.wake)
        started = time.monotonic()
        assert watcher.wait(30.0) is True
        assert time.monotonic() - started < 5.0


def test_a_model_call_s_wait_ends_on_its_answer_or_an_interrupt_without_polling() -> None:
    done, interrupt = WakeEvent(), WakeEvent()
    _later(0.2, done.set)
    assert interrupted_first(done, interrupt, poll=60.0) is False  # a poll of 60 s would fail the deadline below
    done, interrupt = WakeEvent(), WakeEvent()
    _later(0.2, interrupt.set)
    started = time.monotonic()
    assert interrupted_first(done, interrupt, poll=60.0) is True
    assert time.monotonic() - started < 5.0
    done, interrupt = WakeEvent(), WakeEvent()
    done.set()
    interrupt.set()
    assert interrupted_first(done, interrupt, poll=60.0) is False  # an answer that came first is kept
    plain = threading.Event()
    _later(0.2, plain.set)
    assert interrupted_first(threading.Event(), plain, poll=0.02) is True  # a plain flag: looked at every poll


def test_an_idle_teammate_stops_at_once_although_its_round_is_long(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its stop flag (a WakeEvent) ends its idle wait: the round (WAIT_SLICE * IDLE_SLICES) need not pass."""
    monkeypatch.setattr(teammate_module, "WAIT_SLICE", 30.0)  # a 300 s round
    rig = teammate_rig(layout, tmp_path, FakeModel([]))
    assert isinstance(rig.runtime.stop, WakeEvent)
    with running_teammate(rig):
        wait_until(lambda: rig.runtime.presence.state == "idle", 5.0, "alice to go idle")
        time.sleep(0.2)  # into its wait
        started = time.monotonic()
        rig.runtime.stop.set()
        assert rig.thread is not None
        rig.thread.join(5.0)
        assert not rig.thread.is_alive()
        assert time.monotonic() - started < 5.0


def _pane_handle(name: str, proc: subprocess.Popen[bytes]) -> Handle:
    return Handle(name, "tmux", pane_id="%1", pane_pid=proc.pid, pane_started=proc_start(proc.pid))


def test_the_lead_s_wait_ticks_less_often_only_while_every_teammate_s_end_is_an_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[float | None] = []

    class Files:
        def wait(self, timeout: float | None = None, *, fds: object = ()) -> bool:
            seen.append(timeout)
            return False

        def wake(self) -> None: ...

    monkeypatch.setattr(heartbeat, "interval", lambda: 5.0)
    monkeypatch.setattr(teamwait, "sweep_every", lambda: 5.0)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    handles: dict[str, Handle] = {"w0": _pane_handle("w0", child)}
    try:
        with TeamWait(Files(), handles) as waiter:  # type: ignore[arg-type]
            waiter.wait(0.5)
            assert seen[-1] == 0.5 * teamwait.STRETCH  # its pane process's end wakes the lead: a longer tick
            handles["w1"] = Handle("w1", "in-process")  # a thread: no pidfd, so the lead looks as often as before
            waiter.wait(0.5)
            assert seen[-1] == 0.5
    finally:
        child.kill()
        child.wait()


def test_the_lead_is_woken_by_a_tmux_teammate_s_end_and_not_again_by_the_same_one(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    handles = {"w0": _pane_handle("w0", child)}
    with FileWatcher([tmp_path / "team-lead.json"]) as files, TeamWait(files, handles) as waiter:
        started = time.monotonic()
        assert waiter.wait(10.0) is True  # the pidfd: long before the 40 s tick
        assert time.monotonic() - started < 8.0
        child.wait()
        started = time.monotonic()
        assert waiter.wait(0.1) is False  # fired once: the tick that woke has handled it, no busy loop
        assert time.monotonic() - started >= 0.1


def test_the_wake_event_listens_and_stops_listening() -> None:
    flag, calls = WakeEvent(), []
    stop = flag.listen(lambda: calls.append(1))
    flag.set()
    assert calls == [1]
    stop()
    flag.set()
    assert calls == [1]
    flag.listen(lambda: calls.append(2))  # already set: called at once
    assert calls == [1, 2]
    assert issubclass(WakeEvent, threading.Event) and watch.WakeEvent is WakeEvent
