"""A tmux spawn writes its teammate's prompt beside the pane's start (team/spawn/parallel_call.py): both done before the
Task call returns, and a failure of either leaves neither behind."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentteams.agent.session import Session, SessionOptions
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.teams import TeamStore
from agentteams.store.paths import Layout
from agentteams.team.spawn.base import Handle, SpawnRequest
from agentteams.team.spawn.member import spawn_member
from agentteams.team.spawn.parallel_call import Beside
from agentteams.tools.base import ToolInputError
from tests.support.fake_model import FakeModel

TEAM = "beside"


def test_the_call_runs_while_start_does_and_is_done_before_joined_returns() -> None:
    started, done = threading.Event(), threading.Event()

    def call() -> None:
        assert started.wait(10), "the call did not run beside start"
        done.set()

    def start(arg: str) -> str:
        started.set()  # the call, waiting for this, is in another thread: start does not wait for it
        return arg.upper()

    assert Beside(call).joined(start, "pane", undo=lambda _: None) == "PANE"
    assert done.is_set()


def test_a_failed_call_undoes_what_start_made_and_raises_its_error() -> None:
    undone: list[str] = []

    def fail() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        Beside(fail).joined(lambda a: a, "pane", undo=undone.append)
    assert undone == ["pane"]


def test_a_failed_start_waits_for_the_call_then_raises_its_own_error() -> None:
    release, done = threading.Event(), threading.Event()

    def slow() -> None:
        release.wait(10)
        done.set()

    def start(arg: str) -> str:
        release.set()
        raise RuntimeError("no pane")

    with pytest.raises(RuntimeError, match="no pane"):
        Beside(slow).joined(start, "x", undo=lambda _: pytest.fail("nothing was made"))
    assert done.is_set()  # whatever the call wrote is there before the caller cleans up


def test_inline_runs_the_call_at_once() -> None:
    ran: list[str] = []
    Beside(lambda: ran.append("now"), inline=True)
    assert ran == ["now"]


class Panes:
    backend = "tmux"
    takes_lead_key = True

    def __init__(self) -> None:
        self.stopped: list[str] = []

    def spawn(self, req: SpawnRequest) -> Handle:
        return Handle(req.name, "tmux", pane_id="%7")

    def alive(self, handle: Handle, team: str) -> bool:
        return handle.pane_id not in self.stopped

    def stop(self, handle: Handle) -> None:
        self.stopped.append(handle.pane_id)


def test_a_prompt_that_cannot_be_written_stops_the_started_pane_and_unregisters_it(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(SessionOptions(cwd=tmp_path), FakeModel([]), layout=layout)
    TeamStore(layout).create(TEAM, cwd=str(tmp_path))
    panes = Panes()
    spawn_member(session, panes, TEAM, {"name": "alice", "prompt": "You are alice."})
    assert [m.text for m in Mailbox(layout).read_live(TEAM, "alice")] == ["You are alice."]

    def full(*args: object, **kwargs: object) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(session.store.mail, "send", full)
    with pytest.raises(ToolInputError, match="Could not start bob: No space left on device"):
        spawn_member(session, panes, TEAM, {"name": "bob", "prompt": "You are bob."})
    assert panes.stopped == ["%7"]
    assert TeamStore(layout).read(TEAM).member("bob") is None
