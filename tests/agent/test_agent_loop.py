"""The agent loop with an in-memory model: tool round trips, permissions, concurrency, limits, interrupts."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from agentteams.agent.loop import Agent, AgentEvent, AgentSettings, PermissionAsk
from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.tools.base import ToolContext, ToolInputError, ToolKind, ToolResult
from tests.support.fake_model import FakeModel, text, tool
from tests.support.loop_parts import Echo, Policy, results_of
from tests.support.wait import wait_until


class Slow(Echo):
    """Each call waits until three calls are in at once: run one after another, the first would wait in vain."""

    name = "Slow"
    together = threading.Barrier(3, timeout=10)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        Slow.together.wait()  # BrokenBarrierError unless all three run side by side
        return ToolResult("slow done")


class Boom(Echo):
    name = "Boom"
    kind: ClassVar[ToolKind] = "execute"

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise RuntimeError("kaput")


class BadTarget(Echo):
    name = "BadTarget"

    def permission_target(self, args: dict[str, Any], cwd: Path | None = None) -> str | None:
        raise ToolInputError("`path` is required")


def make(model: FakeModel, tmp_path: Path, policy: Policy | None = None, **kw: Any) -> tuple[Agent, list[AgentEvent]]:
    events: list[AgentEvent] = []
    ctx = ToolContext(cwd=tmp_path, store=FileStore(Layout(tmp_path / "cfg")), session_id="s1")
    agent = Agent(
        model, [Echo(), Slow(), Boom(), BadTarget()], ctx, policy or Policy(), AgentSettings("m", "sys", **kw),
        on_event=events.append,
    )  # fmt: skip
    return agent, events


def test_tool_round_trip_and_final_text(tmp_path: Path) -> None:
    model = FakeModel([[text("checking"), tool("Echo", text="hi")], [text("all done")]])
    agent, events = make(model, tmp_path)
    result = agent.run("go")
    assert (result.text, result.stop_reason, result.model_calls) == ("all done", "end_turn", 2)
    [res] = results_of(agent, 2)
    assert res["content"] == "echo: hi" and "is_error" not in res
    assert res["tool_use_id"] == model.requests[1].messages[1]["content"][1]["id"]
    kinds = [e.kind for e in events]
    assert kinds.count("tool_start") == 1 and kinds[-1] == "turn_end"
    assert "".join(e.text for e in events if e.kind == "text").startswith("checking")
    assert result.usage.input_tokens == 20


def test_failures_become_error_results(tmp_path: Path) -> None:
    calls = [tool("Boom"), tool("Nope"), tool("Echo"), tool("BadTarget")]
    agent, _ = make(FakeModel([calls, [text("ok")]]), tmp_path)
    assert agent.run("go").stop_reason == "end_turn"
    res = results_of(agent, 2)
    assert all(r["is_error"] for r in res)
    assert "kaput" in res[0]["content"] and "No tool named 'Nope'" in res[1]["content"]
    assert "`text` is required" in res[2]["content"] and "`path` is required" in res[3]["content"]


def test_permissions_deny_ask_and_always(tmp_path: Path) -> None:
    policy = Policy({"Echo": "deny", "Boom": "ask"})
    agent, _ = make(FakeModel([[tool("Echo", text="x")], [text("k")]]), tmp_path, policy)
    agent.run("go")
    assert "Permission denied for Echo: Echo needs approval" in results_of(agent, 2)[0]["content"]

    asked: list[PermissionAsk] = []
    answers = iter(["deny", "always"])

    def ask(q: PermissionAsk) -> Any:
        asked.append(q)
        return next(answers)

    model = FakeModel([[tool("Boom")], [tool("Boom")], [tool("Boom")], [text("k")]])
    agent, _ = make(model, tmp_path, policy)
    agent.ask = ask
    agent.run("go")
    assert len(asked) == 2  # the third call was remembered
    assert "denied permission" in results_of(agent, 2)[0]["content"]
    assert "kaput" in results_of(agent, 4)[0]["content"] and "kaput" in results_of(agent, 6)[0]["content"]


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_read_only_calls_run_side_by_side(tmp_path: Path) -> None:
    Slow.together.reset()
    agent, _ = make(FakeModel([[tool("Slow"), tool("Slow"), tool("Slow")], [text("k")]]), tmp_path)
    agent.run("go")
    assert [r["content"] for r in results_of(agent, 2)] == ["slow done"] * 3  # each met the other two


def test_max_turns_stops_the_loop(tmp_path: Path) -> None:
    agent, _ = make(FakeModel([[tool("Echo", text="x")]] * 10), tmp_path, max_turns=3)
    result = agent.run("go")
    assert (result.stop_reason, result.model_calls) == ("max_turns", 3)


def test_interrupt_ends_the_turn_not_the_agent(tmp_path: Path) -> None:
    model = FakeModel([[text("a long answer that gets cut")], [text("second turn fine")]])
    agent, _ = make(model, tmp_path)
    model.before_answer = lambda n: agent.ctx.interrupt.set() if n == 0 else None
    assert agent.run("go").stop_reason == "interrupted"
    second = agent.run("again")
    assert (second.stop_reason, second.text) == ("end_turn", "second turn fine")


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_interrupt_before_the_first_byte_ends_the_turn_at_once(tmp_path: Path) -> None:
    """A model that has not answered yet (time to first token) must not hold Ctrl-C up."""
    release = threading.Event()
    model = FakeModel([[text("late words that must not show")], [text("next turn")]])

    def hold_first(n: int) -> None:
        if n == 0:
            release.wait(10)

    model.before_answer = hold_first
    agent, events = make(model, tmp_path)
    threading.Timer(0.2, agent.ctx.interrupt.set).start()
    started = time.monotonic()
    result = agent.run("go")
    took = time.monotonic() - started
    assert result.stop_reason == "interrupted" and took < 1.0, took
    second = agent.run("again")  # the abandoned call is still blocked: the next turn does not wait for it
    release.set()
    assert second.text == "next turn"
    wait_until(lambda: not any(t.name == "main-model" for t in threading.enumerate()), 5, "the abandoned call")
    assert not any(e.kind == "text" and "late words" in e.text for e in events)


def test_exit_requested_by_a_tool_ends_the_turn(tmp_path: Path) -> None:
    class Quit(Echo):
        name = "Quit"

        def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            ctx.signals.exit_requested = True
            return ToolResult("bye")

    model = FakeModel([[tool("Quit")], [text("never")]])
    agent, _ = make(model, tmp_path)
    agent.tools["Quit"] = Quit()
    assert agent.run("go").stop_reason == "exit_requested"
    assert len(model.requests) == 1


def test_the_prompt_is_recorded_once_its_request_has_left_and_before_anything_of_its_answer(tmp_path: Path) -> None:
    """A woken agent's request leaves first; the prompt's event (its transcript entry, its line on screen) comes
    once the answer opens, or SEND_WAIT later at the latest, and never after an event of the answer, whichever
    thread emits that."""
    recorded = threading.Event()

    class Opening(FakeModel):
        def complete(self, request: Any, callbacks: Any = None) -> Any:
            assert not recorded.is_set()  # the request left before the prompt was recorded
            return super().complete(request, callbacks)

    class Slow(FakeModel):  # an answer that takes long to open: the prompt is recorded meanwhile
        def complete(self, request: Any, callbacks: Any = None) -> Any:
            assert recorded.wait(5), "the prompt waited for the whole answer"
            return super().complete(request, callbacks)

    for model in (Opening([[text("done")]]), Slow([[text("done")]])):
        recorded.clear()
        agent, events = make(model, tmp_path)

        def listen(event: AgentEvent, events: list[AgentEvent] = events) -> None:
            events.append(event)
            if event.kind == "user":
                recorded.set()

        agent.on_event = listen
        assert agent.run("go").text == "done"
        kinds = [e.kind for e in events]
        assert kinds[:2] == ["user", "answering"] and kinds.count("user") == 1
