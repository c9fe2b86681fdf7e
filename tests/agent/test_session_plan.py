"""A lead or solo agent leaves plan mode through ExitPlanMode: the person approves at the prompt, headless
only an allow rule naming ExitPlanMode does; until then nothing is written."""

from __future__ import annotations

from pathlib import Path

from agentteams.agent.loop import Answer, PermissionAsk
from agentteams.agent.session import Session, SessionOptions
from agentteams.store.paths import Layout
from tests.support.fake_model import FakeModel, text, tool


def plan_then_write(target: Path) -> FakeModel:
    return FakeModel([
        [tool("ExitPlanMode", plan="1. write out.txt")],
        [tool("Write", file_path=str(target), content="done\n")],
        [text("Finished.")],
    ])  # fmt: skip


def session(tmp_path: Path, layout: Layout, model: FakeModel, **kw: object) -> Session:
    options = SessionOptions(cwd=tmp_path, permission_mode="plan", **kw)  # type: ignore[arg-type]
    return Session(options, model, layout=layout)


def test_the_person_approves_and_edits_are_accepted_from_then_on(tmp_path: Path, layout: Layout) -> None:
    asked: list[PermissionAsk] = []

    def ask(question: PermissionAsk) -> Answer:
        asked.append(question)
        return "always"

    target = tmp_path / "out.txt"
    s = session(tmp_path, layout, plan_then_write(target), interactive=True)
    s.agent.ask = ask
    s.run("plan it, then do it")
    assert [q.tool for q in asked] == ["ExitPlanMode"] and asked[0].input == {"plan": "1. write out.txt"}
    assert s.policy.mode == "acceptEdits" and s.ctx.hooks.permission_mode() == "acceptEdits"
    assert target.read_text() == "done\n"


def test_the_person_says_no_and_plan_mode_holds(tmp_path: Path, layout: Layout) -> None:
    target = tmp_path / "out.txt"
    s = session(tmp_path, layout, plan_then_write(target), interactive=True)
    s.agent.ask = lambda _q: "deny"
    s.run("plan it, then do it")
    assert s.policy.mode == "plan" and not target.exists()


def test_headless_without_a_rule_stays_in_plan_mode(tmp_path: Path, layout: Layout) -> None:
    target = tmp_path / "out.txt"
    s = session(tmp_path, layout, plan_then_write(target))
    s.run("plan it, then do it")
    assert s.policy.mode == "plan" and not target.exists()


def test_headless_with_an_allow_rule_leaves_plan_mode(tmp_path: Path, layout: Layout) -> None:
    target = tmp_path / "out.txt"
    s = session(tmp_path, layout, plan_then_write(target), allowed_tools=["ExitPlanMode"])
    s.run("plan it, then do it")
    assert s.policy.mode == "acceptEdits" and target.read_text() == "done\n"
