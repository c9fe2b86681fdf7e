"""The REPL's rendering, on a plain console: tool output previews, protocol messages in words, idle lines that
say nothing new shown once, team lines never inside a streamed answer."""

from __future__ import annotations

import io
import json

from rich.console import Console

from agentteams.agent.loop import AgentEvent
from agentteams.team.delivery import TeamEvent
from agentteams.team.status_view import TaskView, TeamView
from agentteams.tools.base import ToolResult
from agentteams.ui.dashboard import BOARD_LINES, plain_team, tasks_table
from agentteams.ui.render import Renderer, make_console, message_text


def rendered(*events: AgentEvent | TeamEvent) -> list[str]:
    out = io.StringIO()
    renderer = Renderer(make_console(False, out))
    for event in events:
        if isinstance(event, TeamEvent):
            renderer.team_event(event)
        else:
            renderer.agent_event(event)
    return out.getvalue().splitlines()


def ended(content: str, *, error: bool = False) -> AgentEvent:
    return AgentEvent("tool_end", tool="Bash", input={}, result=ToolResult(content, is_error=error))


def test_a_tool_call_shows_the_first_lines_of_its_output() -> None:
    lines = rendered(ended("one\n\ntwo\nthree\nfour\nfive"), ended(""), ended("boom", error=True))
    assert lines == ["  ⎿  one", "     two", "     three", "     … +2 lines", "  ⎿  (No content)", "  ⎿  boom"]


def test_protocol_messages_are_shown_in_words() -> None:
    plan = {"type": "plan_approval_request", "from": "carol", "planContent": "1. write the parser\n2. test it",
            "requestId": "plan-1"}  # fmt: skip
    assert message_text(json.dumps(plan)) == "asks to approve a plan: 1. write the parser 2. test it"
    assert message_text('{"type":"idle_notification","result":"all done"}') == "is idle: all done"
    assert message_text('{"type":"permission_request","tool_name":"Bash","description":"run make"}') == (
        "asks to use Bash: run make"
    )
    assert message_text('{"type":"something_new"}') == "[something_new]"
    assert message_text("plain text {not json") == "plain text {not json"
    lines = rendered(TeamEvent("message", "carol", json.dumps(plan)))
    assert lines == ["✉ carol asks to approve a plan: 1. write the parser 2. test it"]


def test_a_repeated_idle_line_is_shown_once_until_something_else_happens() -> None:
    idle = TeamEvent("idle", "alice", "")
    said = TeamEvent("message", "alice", "done with #1")
    lines = rendered(idle, idle, TeamEvent("idle", "bob", ""), idle, said, idle, TeamEvent("idle", "alice", "x"))
    assert lines == ["· alice is idle", "· bob is idle", "✉ alice: done with #1", "· alice is idle",
                     "· alice is idle: x"]  # fmt: skip


def test_team_lines_that_come_while_an_answer_streams_follow_it_whole() -> None:
    text = [AgentEvent("text", text=piece) for piece in ("LEAD-GOT-", "REP", "ORT\nsecond ", "line")]
    events: list[AgentEvent | TeamEvent] = [*text[:2], TeamEvent("idle", "alice", "alice idle."), text[2],
              TeamEvent("message", "bob", "hello"), text[3], AgentEvent("turn_end")]  # fmt: skip
    assert rendered(*events) == ["⏺ LEAD-GOT-REPORT", "  second line", "· alice is idle: alice idle.", "✉ bob: hello"]
    after = rendered(*text[:1], AgentEvent("tool_start", tool="Read", input={}), TeamEvent("idle", "alice", ""))
    assert after == ["⏺ LEAD-GOT-", "⏺ Read({})", "· alice is idle"]  # once the answer ended, at once


def _board_view(n: int) -> TeamView:
    """A team view of `n` tasks, the first nine tenths completed, then every other one in progress (bob's)."""
    tasks = []
    for i in range(1, n + 1):
        status = "completed" if i <= n * 9 // 10 else ("in_progress" if i % 2 else "pending")
        tasks.append(TaskView(str(i), f"task {i}", status, "bob" if status == "in_progress" else None, [], []))
    return TeamView("t", None, "team-lead", False, [], tasks)


def _terminal_board(view: TeamView, *, show_all: bool = False) -> list[str]:
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system=None, width=200).print(tasks_table(view, show_all=show_all))
    return out.getvalue().splitlines()


def test_a_board_past_its_lines_shows_the_counts_who_works_and_the_tasks_worth_a_look() -> None:
    """`status` and `watch`, on a terminal or piped: a board of 10 000 took rich a second per draw, scrolled the members
    away and was most of a piped status's time; past BOARD_LINES tasks it shows the counts, the owners of the tasks
    in progress, the last completed tasks, then the open ones up to BOARD_LINES in all (every one: --all, --json)."""
    small = _board_view(BOARD_LINES)
    assert _terminal_board(small) == ["tasks", *(f"  {small.line(t)}" for t in small.tasks)]
    assert plain_team(small).splitlines()[2:] == _terminal_board(small)
    big = _board_view(10_000)
    head, who, *lines = _terminal_board(big)
    assert head == ("tasks: 10000, 9000 completed, 500 in progress, 500 pending; the last 5 completed and the open "
                    "ones (every task: agentteams status t --all, or --json)")  # fmt: skip
    assert who == "  in progress: bob 500"
    done = [f"  #{i} [completed] task {i}" for i in range(8996, 9001)]
    working = [f"  #{i} [in_progress] task {i} (bob)" for i in range(9001, 10_001, 2)]
    assert lines == [*done, *working[: BOARD_LINES - 5], f"  ... and {1000 - BOARD_LINES + 5} more open tasks"]
    assert plain_team(big).splitlines()[2:] == [head, who, *lines]  # piped: the same words
    assert len(_terminal_board(big, show_all=True)) == 10_001
    assert len(plain_team(big, show_all=True).splitlines()) == 2 + 10_001
