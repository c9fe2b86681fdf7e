"""The lead runtime in process: idle notices coalesce, a departure is one turn, a death frees the member's tasks.

Teammates are played by the test through the real file store; the spawner only records; the model fails
loudly on any call its script does not expect.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.protocol import ShutdownRejected
from tests.support.fake_model import FakeModel, text
from tests.support.runtime import TEAM, WAIT, Events, quick_polls, running_lead
from tests.support.wait import wait_until


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_polls(monkeypatch)


def test_idle_notices_wake_the_model_once_when_the_whole_team_is_idle(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[text("Everyone is idle.")]])
    with running_lead(layout, tmp_path, model, "alice", "bob", "carol") as lead:
        for name in ("alice", "alice", "bob"):  # carol still works: nobody wakes the model
            lead.idle(name)
            lead.settle()
            assert model.calls == 0
        lead.idle("carol", summary="[to bob] the schema is ready")
        lead.settle()
        assert model.calls == 1
        woke = model.user_text(0)
        # one notice per teammate: alice's second bare notice replaced her first
        assert [woke.count(f'teammate_id="{n}"') for n in ("alice", "bob", "carol")] == [1, 1, 1]
        assert "[to bob] the schema is ready" in woke


def test_a_team_file_s_lead_reads_its_instructions_before_its_teammates_news(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[text("On it.")]])
    events = Events()
    with running_lead(layout, tmp_path, model, "alice", events=events, held=True) as lead:
        lead.mailbox.send(lead.team, LEAD_NAME, "Task #1 done.", sender="alice")  # faster than the lead's REPL
        wait_until(lambda: "message" in events.kinds("alice"), WAIT, "the lead to read alice's message")
        assert not lead.runtime.wait_idle(0.2), "the message waits for the first prompt"
        assert model.calls == 0
        lead.runtime.submit('You lead team "proj". Keep the team on the task list.')
        lead.settle()
        assert model.calls == 1
        first = model.user_text(0)
        assert 'You lead team "proj"' in first and "Task #1 done." in first, first


def test_an_idle_notice_from_a_teammate_that_has_left_does_not_wake_the_model(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[text("bob has left; alice is idle.")]])
    with running_lead(layout, tmp_path, model, "alice", "bob") as lead:
        lead.idle("alice")
        lead.approve_shutdown("bob")
        lead.settle()
        assert model.calls == 1 and lead.members() == ["team-lead", "alice"]
        lead.idle("bob")  # a real Claude Code teammate's last notice, after it approved; the team is idle
        lead.settle()
        assert model.calls == 1


def test_a_departure_and_its_approval_reach_the_model_in_one_turn(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[text("alice has shut down.")]])
    events = Events(delay=0.05)  # a UI slow to draw each event: time for a stray turn to start
    with running_lead(layout, tmp_path, model, "alice", events=events) as lead:
        lead.approve_shutdown("alice")
        lead.settle()
        assert model.calls == 1
        woke = model.user_text(0)
        assert "[team] Teammate alice shut down (approved the shutdown request)." in woke
        assert '"type":"shutdown_approved"' in woke
        assert lead.members() == ["team-lead"] and lead.spawner.stopped == ["alice"]
        assert events.kinds("alice") == ["joined", "left", "message"]


def test_a_dead_teammate_s_tasks_go_back_to_pending_and_the_next_turn_says_so(tmp_path: Path, layout: Layout) -> None:
    release = threading.Event()

    def hold_the_first_turn(n: int) -> None:
        if n == 0:
            release.wait(WAIT)

    model = FakeModel([[text("Starting.")], [text("I will give #1 to bob.")]], before_answer=hold_the_first_turn)
    with running_lead(layout, tmp_path, model, "alice", "bob") as lead:
        team, tasks = lead.team, lead.tasks
        for subject, owner in (("Parse", "alice"), ("Lex", "bob")):
            task = tasks.create(team, subject)
            tasks.update(team, task.id, owner=owner, status="in_progress")
        lead.runtime.submit("Get going.")
        wait_until(lambda: model.calls == 1, WAIT, "the first turn")
        lead.spawner.kill("alice")
        wait_until(lambda: "alice" not in lead.members(), WAIT, "the lead to notice alice's death")
        assert (tasks.get(team, "1").owner, tasks.get(team, "1").status) == (None, "pending")
        assert (tasks.get(team, "2").owner, tasks.get(team, "2").status) == ("bob", "in_progress")
        assert lead.spawner.stopped == ["alice"]
        assert model.calls == 1  # the turn in progress is not disturbed
        release.set()
        wait_until(lambda: model.calls == 2, WAIT, "the next turn")
        lead.settle()
        assert model.calls == 2
        told = model.user_text(1)
        assert told.startswith("[team] Teammate alice stopped unexpectedly")
        assert "pending again: #1" in told and "#2" not in told and "Get going." not in told


def test_a_turn_that_crashes_leaves_the_lead_answering(tmp_path: Path, layout: Layout) -> None:
    """A bug in a turn (not an AgentTeamsError) is one error for the caller; the worker lives on."""

    def crash_first(n: int) -> None:
        if n == 0:
            raise RuntimeError("boom")

    model = FakeModel([[text("never sent")], [text("Still here.")]], before_answer=crash_first)
    with running_lead(layout, tmp_path, model) as lead:
        lead.runtime.submit("first")
        assert lead.runtime.wait_idle(WAIT)
        assert lead.runtime.last_error is not None and "RuntimeError: boom" in str(lead.runtime.last_error)
        lead.runtime.submit("second")
        wait_until(lambda: model.calls == 2, WAIT, "the lead's second turn")
        assert lead.runtime.wait_idle(WAIT) and lead.runtime.last_error is None


def test_the_team_is_not_settled_while_a_shutdown_request_is_unanswered(tmp_path: Path, layout: Layout) -> None:
    """A real `claude` teammate reads its inbox once a second: a headless lead must wait for its answer."""
    model = FakeModel([], default=text("Noted."))  # how many turns the idle notices make is not the point here
    with running_lead(layout, tmp_path, model, "alice", "bob") as lead:
        lead.idle("alice")
        lead.idle("bob")
        wait_until(lambda: model.calls >= 1, WAIT, "the lead's turn for the idle team")
        lead.settle()
        assert lead.runtime.settled()
        for name in ("alice", "bob"):
            lead.runtime.promises.shutdown_sent(name, f"shutdown-1@{name}")
        assert not lead.runtime.settled()
        refusal = ShutdownRejected(request_id="shutdown-1@alice", sender="alice", reason="busy", timestamp=now_iso())
        lead.mailbox.send(TEAM, LEAD_NAME, refusal.to_text(), sender="alice")
        lead.settle()
        assert not lead.runtime.settled()  # bob has not answered yet
        lead.approve_shutdown("bob")
        lead.settle()
        assert lead.runtime.settled() and lead.members() == ["team-lead", "alice"]


def test_closing_the_lead_ends_its_team_thread_without_waiting_out_a_look(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentteams.team.lead import runtime as lead_runtime

    monkeypatch.setattr(lead_runtime, "CHECK_EVERY", 60.0)  # a look far longer than close's 5 s join
    with running_lead(layout, tmp_path, FakeModel([]), "alice") as lead:
        thread = lead.runtime.team_thread
        assert thread is not None
        wait_until(lambda: lead.runtime._team_waiter is not None, WAIT, "the team thread's watch")
    assert not thread.is_alive()  # close woke it: it did not sit out its 60 s look
