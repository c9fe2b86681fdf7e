"""The teammate runtime in process: plan approval, wake order and task claiming, waiting on the lead's permission.

The lead is played by the test through the real file store; the model fails loudly on any call its script
does not expect.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agentteams.agent.loop import Answer, PermissionAsk
from agentteams.agent.prompts import claim_prompt
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.protocol import (
    PermissionRequest,
    PermissionResponse,
    PlanApprovalRequest,
    PlanApprovalResponse,
    ShutdownRequest,
)
from tests.support.fake_model import FakeModel, text, tool
from tests.support.runtime import WAIT, quick_polls, running_teammate, teammate_rig
from tests.support.wait import wait_until


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_polls(monkeypatch)


@pytest.mark.usefixtures("quick")
def test_plan_approval_takes_the_teammate_out_of_plan_mode(tmp_path: Path, layout: Layout) -> None:
    target = tmp_path / "out.txt"
    write = tool("Write", file_path=str(target), content="done\n")
    model = FakeModel([
        [write], [tool("ExitPlanMode", plan="1. write out.txt")], [text("Plan sent; waiting.")],
        [write], [text("Written.")],
    ])  # fmt: skip
    rig = teammate_rig(layout, tmp_path, model, plan_mode_required=True)
    mode = rig.runtime.ctx.hooks.permission_mode  # the live mode, as the tools see it
    assert mode() == "plan"
    rig.from_lead("Write out.txt.")
    with running_teammate(rig):
        rig.wait_turns(1)
        assert "plan mode is read-only" in model.user_text(1) and not target.exists()
        assert mode() == "plan" and rig.member().mode is None
        [plan] = [m for m in rig.to_lead() if isinstance(m, PlanApprovalRequest)]
        assert plan.plan_content == "1. write out.txt" and model.calls == 3
        approval = PlanApprovalResponse(
            request_id=plan.request_id, approved=True, timestamp=now_iso(), permission_mode="acceptEdits"
        )
        rig.from_lead(approval.to_text())
        rig.wait_turns(2)
        assert "[Plan Approved]" in model.user_text(3) and target.read_text() == "done\n"
        assert mode() == "acceptEdits" and rig.member().mode == "acceptEdits"


@pytest.mark.usefixtures("quick")
def test_wake_order_then_the_lowest_open_task_is_claimed(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[text("My work is not done: I stay.")], [text("On it.")]])
    rig = teammate_rig(layout, tmp_path, model, peers=("bob",))
    team, tasks = rig.team, rig.tasks
    rig.mailbox.send(team, "alice", "PEER: can you review my lexer?", sender="bob")
    rig.from_lead("LEAD: focus on the parser first.")
    stop = ShutdownRequest(request_id="shutdown-1@alice", sender=LEAD_NAME, reason="Wrapping up.", timestamp=now_iso())
    rig.from_lead(stop.to_text())
    lex = tasks.create(team, "Lex")
    tasks.update(team, lex.id, owner="bob")
    tasks.create(team, "Integrate", blocked_by=[lex.id])
    tasks.create(team, "Parse", "the grammar")
    tasks.create(team, "Docs")
    with running_teammate(rig):
        rig.wait_turns(2)
        first = model.user_text(0)
        where = [first.find(s) for s in ('"type":"shutdown_request"', "LEAD: focus", "PEER: can you")]
        assert -1 not in where and where == sorted(where), first
        assert model.user_text(1) == claim_prompt("3", "Parse", "the grammar")
        assert [(t.id, t.owner, t.status) for t in tasks.list_tasks(team)] == [
            ("1", "bob", "pending"), ("2", None, "pending"), ("3", "alice", "in_progress"), ("4", None, "pending"),
        ]  # fmt: skip


@pytest.mark.usefixtures("quick")
@pytest.mark.parametrize("allow", [True, False], ids=["allow", "deny"])
def test_a_tool_needing_approval_waits_for_the_lead_s_answer(tmp_path: Path, layout: Layout, allow: bool) -> None:
    target = tmp_path / "out.txt"
    model = FakeModel([[tool("Write", file_path=str(target), content="done\n")], [text("Finished.")]])
    rig = teammate_rig(layout, tmp_path, model)
    rig.from_lead("Write out.txt.")
    with running_teammate(rig):
        wait_until(lambda: any(isinstance(m, PermissionRequest) for m in rig.to_lead()), WAIT, "a permission_request")
        [ask] = [m for m in rig.to_lead() if isinstance(m, PermissionRequest)]
        assert (ask.tool_name, ask.input["file_path"], ask.agent_id) == ("Write", str(target), "alice@proj")
        assert model.calls == 1 and rig.turns_done() == 0 and not target.exists()  # waiting on the lead
        answer = PermissionResponse(
            request_id=ask.request_id, subtype="success" if allow else "error",
            response={"updated_input": ask.input, "permission_updates": []} if allow else None,
            error=None if allow else "The team lead denied this request.",
        )  # fmt: skip
        rig.from_lead(answer.to_text())
        rig.wait_turns(1)
        assert target.exists() is allow
        assert ("denied permission to use Write" in model.user_text(1)) is not allow
        assert not rig.mailbox.unread(rig.team, "alice")  # the answer was consumed, not left to wake a turn


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_the_permission_wait_ends_on_time_while_other_messages_keep_arriving(tmp_path: Path, layout: Layout) -> None:
    timeout = 0.3
    rig = teammate_rig(layout, tmp_path, FakeModel([]), permission_timeout=timeout)
    ask = rig.runtime.session.agent.ask
    assert ask is not None
    noise_stop = threading.Event()
    sent: list[int] = []

    def noise() -> None:  # a chatty peer: the inbox changes every few milliseconds
        while not noise_stop.is_set():
            rig.mailbox.send(rig.team, "alice", f"noise {len(sent)}", sender="bob")
            sent.append(1)
            noise_stop.wait(0.01)

    answers: list[tuple[Answer, float]] = []  # the answer and how long it took
    question = PermissionAsk("Write", str(tmp_path / "out.txt"), {"file_path": str(tmp_path / "out.txt")}, "why")

    def asking() -> None:
        started = time.monotonic()
        answer = ask(question)
        answers.append((answer, time.monotonic() - started))

    noiser = threading.Thread(target=noise, daemon=True)
    noiser.start()
    wait_until(lambda: len(sent) > 0, WAIT, "the first noise message")
    asker = threading.Thread(target=asking, daemon=True)
    asker.start()
    asker.join(timeout + 2.0)
    overran = asker.is_alive()
    rig.runtime.stop.set()  # ends a wait that overran, so the thread does not outlive the test
    noise_stop.set()
    noiser.join(WAIT)
    asker.join(WAIT)
    assert not overran, f"still waiting {timeout + 2.0:.1f}s into a {timeout}s permission timeout"
    [(answer, took)] = answers
    assert answer == "deny" and timeout <= took < timeout + 0.7, (answer, took)
    assert len(sent) >= 5  # the inbox really was busy throughout
    assert [type(m) for m in rig.to_lead()] == [PermissionRequest]
