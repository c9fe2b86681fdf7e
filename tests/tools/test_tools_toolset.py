"""The rest of Claude Code's tool set as a whole: one stable order (the prompt cache), offered to a teammate as to
its lead, and held to permission modes, rules and PreToolUse / PostToolUse hooks like the first tools."""

from __future__ import annotations

from pathlib import Path

from agentteams.agent.prompts import Identity
from agentteams.agent.session import Session, SessionOptions
from agentteams.settings.load import typed
from agentteams.settings.types import Source
from agentteams.store.paths import Layout
from agentteams.tools.registry import all_tools
from tests.support.fake_model import FakeModel, text, tool
from tests.support.hookscript import HookLab
from tests.support.notebooks import make_notebook

NEW = ["BashOutput", "KillShell", "TodoWrite", "NotebookEdit", "WebFetch", "WebSearch"]
TODO = [{"content": "BLOCKME", "status": "pending", "activeForm": "Blocking"}]


def names(model: FakeModel, n: int = 0) -> list[str]:
    return [t.name for t in model.requests[n].tools]


def test_one_stable_order_after_the_first_six() -> None:
    order = [t.name for t in all_tools()]
    assert order[:12] == ["Bash", "Read", "Write", "Edit", "Glob", "Grep", *NEW]
    assert order == [t.name for t in all_tools()]  # built again: the same


def test_a_teammate_is_offered_what_its_lead_is(tmp_path: Path, layout: Layout) -> None:
    lead = FakeModel([[text("ok")]])
    Session(SessionOptions(cwd=tmp_path), lead, layout=layout).run("hi")
    mate = FakeModel([[text("ok")]])
    options = SessionOptions(cwd=tmp_path, team_role="teammate", identity=Identity("eve", "team"))
    Session(options, mate, layout=layout).run("hi")
    assert [n for n in names(mate) if n in NEW] == [n for n in names(lead) if n in NEW] == NEW


def test_modes_hold_the_new_tools(tmp_path: Path, layout: Layout) -> None:
    """Plan mode: the todo list is free, a notebook edit is refused; -p without a rule: WebFetch is denied."""
    path = make_notebook(tmp_path / "nb.ipynb")
    model = FakeModel([
        [tool("TodoWrite", todos=[{"content": "a", "status": "pending", "activeForm": "A"}]),
         tool("Read", file_path=str(path)),
         tool("NotebookEdit", notebook_path=str(path), cell_id="calc", new_source="PLANNED"),
         tool("WebFetch", url="https://example.invalid/", prompt="p")],
        [text("done")],
    ])  # fmt: skip
    session = Session(SessionOptions(cwd=tmp_path, permission_mode="plan"), model, layout=layout)
    session.run("plan")
    said = model.user_text(1)
    assert len(session.ctx.todos.items) == 1 and "PLANNED" not in path.read_text()
    assert "plan mode is read-only" in said and "WebFetch needs permission" in said, said


def test_hooks_see_and_block_the_new_tools(tmp_path: Path, layout: Layout) -> None:
    lab = HookLab(tmp_path / "lab")
    hooks = lab.settings({"PreToolUse": "|".join(NEW), "PostToolUse": "TodoWrite"})
    origins = {f"hooks.{e}[0]": Source("project", str(tmp_path / ".claude" / "settings.json")) for e in hooks}
    lab.answer({"event": "PreToolUse", "when": "BLOCKME", "stderr": "BLOCKME is not allowed here", "exit": 2})
    model = FakeModel([
        [tool("TodoWrite", todos=TODO)],
        [tool("TodoWrite", todos=[{"content": "fine", "status": "in_progress", "activeForm": "Doing fine"}])],
        [text("done")],
    ])  # fmt: skip
    options = SessionOptions(cwd=tmp_path, permission_mode="bypassPermissions", settings=typed({"hooks": hooks},
                                                                                                origins))  # fmt: skip
    session = Session(options, model, layout=layout)
    session.run("go")
    assert "BLOCKME is not allowed here" in model.user_text(1)
    assert [t.content for t in session.ctx.todos.items] == ["fine"]  # the blocked call changed nothing
    [post] = lab.entries("PostToolUse")
    assert (
        post["payload"]["tool_name"] == "TodoWrite" and post["payload"]["tool_input"]["todos"][0]["content"] == "fine"
    )
    assert len(lab.entries("PreToolUse")) == 2
