"""TodoWrite: Claude Code's schema and checks, the list replaced whole (emptied once all is done), shown in the REPL
(live and by /todos) and in a teammate's pane, and read back from the transcript when a session is resumed."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.agent.loop import AgentEvent
from agentteams.agent.session import Session, SessionOptions
from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.transcripts.reader import load
from agentteams.tools.base import ToolContext, ToolInputError, ToolResult
from agentteams.tools.todo_write import TodoWriteTool
from agentteams.tools.todos import TodoList, parse_todos
from agentteams.ui.pane import PaneRenderer
from agentteams.ui.render import Renderer, make_console
from tests.support.fake_model import FakeModel, text, tool
from tests.support.lead_pane import START, Start, lead_route, run, tool_turn

TODOS = [
    {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
    {"content": "Ship it", "status": "pending", "activeForm": "Shipping it"},
]


def test_the_schema_is_claude_codes() -> None:
    item = TodoWriteTool.input_schema["properties"]["todos"]["items"]
    assert TodoWriteTool.input_schema["required"] == ["todos"]
    assert item["required"] == ["content", "status", "activeForm"]
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert item["additionalProperties"] is False


def test_each_call_replaces_the_list_and_a_finished_list_empties(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, store=None, session_id="s")  # type: ignore[arg-type]
    result = TodoWriteTool().run({"todos": TODOS}, ctx)
    assert not result.is_error and "1 in progress, 1 pending, 0 completed" in result.content
    assert result.data == {"oldTodos": [], "newTodos": TODOS}
    assert [t.content for t in ctx.todos.items] == ["Write tests", "Ship it"]
    done = [{**t, "status": "completed"} for t in TODOS]
    assert TodoWriteTool().run({"todos": done}, ctx).data == {"oldTodos": TODOS, "newTodos": done}
    assert ctx.todos.items == ()  # all completed: the list is done, as Claude Code's


@pytest.mark.parametrize("bad", [
    None, "x", [{"content": "a", "status": "bogus", "activeForm": "A"}], [{"content": "", "status": "pending",
    "activeForm": "A"}], [{"content": "a", "status": "pending"}], [{**TODOS[0], "extra": 1}],
])  # fmt: skip
def test_bad_todos_are_refused(bad: Any) -> None:
    with pytest.raises(ToolInputError):
        parse_todos(bad)


def test_restore_takes_the_last_call_that_succeeded() -> None:
    later = [{"content": "Later", "status": "pending", "activeForm": "Doing later"}]

    def call(use_id: str, todos: list[dict[str, str]]) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "tool_use", "id": use_id, "name": "TodoWrite",
                                                  "input": {"todos": todos}}]}  # fmt: skip

    messages: list[dict[str, Any]] = [
        call("a", TODOS),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "ok"}]},
        call("b", later),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "no", "is_error": True}]},
    ]
    todos = TodoList()
    todos.restore(messages)
    assert [t.content for t in todos.items] == ["Write tests", "Ship it"]
    todos.restore([])
    assert todos.items == ()


def event(todos: list[dict[str, str]]) -> AgentEvent:
    result = ToolResult("updated", data={"oldTodos": [], "newTodos": todos})
    return AgentEvent("tool_end", tool="TodoWrite", result=result)


def test_the_repl_and_a_teammate_pane_show_the_list() -> None:
    out = io.StringIO()
    Renderer(make_console(False, out)).agent_event(event(TODOS))
    assert "◐ Writing tests" in out.getvalue() and "☐ Ship it" in out.getvalue()
    pane = io.StringIO()
    PaneRenderer(pane, name="alice", color=None).agent_event(event(TODOS))
    assert pane.getvalue().splitlines() == ["    ◐ Writing tests", "    ☐ Ship it"]


def test_a_resumed_session_has_its_todo_list_back(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[tool("TodoWrite", todos=TODOS)], [text("planned")]])
    first = Session(SessionOptions(cwd=tmp_path), model, layout=layout)
    first.run("plan it")
    assert len(first.ctx.todos.items) == 2
    loaded = load(first.transcript.path)
    again = Session(SessionOptions(cwd=tmp_path, resume=loaded), FakeModel([]), layout=layout)
    assert [t.to_json() for t in again.ctx.todos.items] == TODOS
    again.clear()  # /clear: a new conversation starts with no list
    assert again.ctx.todos.items == ()


def test_todos_survive_continue_and_show_in_the_repl(start_repl: Start, cli: Any, work: Path,
                                                     config_root: Path) -> None:  # fmt: skip
    """A -p session keeps a todo list; resumed in a pane (`-r ID`: an interactive `-c` passes over -p sessions, as
    claude 2.1.332's does) /todos shows it, and a new TodoWrite there is drawn under its call."""
    first = MockServer({"routes": [lead_route(tool_turn("TodoWrite", todos=TODOS), "PLANNED")]}).start()
    try:
        env = {**cli.env(), "ANTHROPIC_BASE_URL": first.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-todo"}
        proc = cli("-p", "plan it", "--output-format", "json", env=env, cwd=work, timeout=60)
        assert proc.returncode == 0 and "PLANNED" in proc.stdout, proc.stderr
    finally:
        first.stop()
    session = json.loads(proc.stdout)["session_id"]
    later = [{**TODOS[0], "status": "completed"}, {**TODOS[1], "status": "in_progress"}]
    routes = {"routes": [lead_route(tool_turn("TodoWrite", todos=later), "NEXT-DONE")]}
    pane, _server = start_repl(routes, "-r", session)
    pane.idle(timeout=START)
    shown = run(pane, "/todos", "☐ Ship it")
    assert "◐ Writing tests" in shown, shown
    pane.submit("go on")
    pane.wait_text("NEXT-DONE")
    pane.idle()
    screen = pane.screen()
    assert "☒ Write tests" in screen and "◐ Shipping it" in screen, screen
    assert "☒ Write tests" in run(pane, "/todos", "◐ Shipping it")  # /todos shows the list as it is now
