"""The coordination tools end to end through `run(args, ctx)` on the real stores: tasks, team, messages, plans."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.store import FileStore
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import Layout
from agentteams.store.protocol import (
    PlanApprovalRequest,
    PlanApprovalResponse,
    ShutdownApproved,
    ShutdownRejected,
    ShutdownRequest,
    TaskAssignment,
    parse_message,
)
from agentteams.store.records import Envelope
from agentteams.store.task_text import FULL_LIST_CHARS, SUMMARY_CHARS, task_lines
from agentteams.tools.base import Tool, ToolContext, ToolResult
from agentteams.tools.plan import ExitPlanModeTool
from agentteams.tools.team.task_tools import TaskCreateTool, TaskGetTool, TaskListTool, TaskUpdateTool
from agentteams.tools.team.team_tools import SendMessageTool, TeamCreateTool, TeamDeleteTool
from tests.support.task_board import counting_task_reads, write_board

SESSION = "59a7c56e-ba02-4852-8848-2be4790d8873"


def call(tool: type[Tool], args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return tool().run(args, ctx)


def ok(tool: type[Tool], args: dict[str, Any], ctx: ToolContext) -> str:
    result = call(tool, args, ctx)
    assert not result.is_error, result.content
    return result.content


def ok_json(tool: type[Tool], args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ok(tool, args, ctx))
    return data


def err(tool: type[Tool], args: dict[str, Any], ctx: ToolContext) -> str:
    result = call(tool, args, ctx)
    assert result.is_error, result.content
    return result.content


@pytest.fixture
def lead(layout: Layout, tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, store=FileStore(layout), session_id=SESSION)


@pytest.fixture
def team(lead: ToolContext, layout: Layout) -> str:
    """A team led by `lead` with alice (tmux pane %1) and bob."""
    ok(TeamCreateTool, {"team_name": "Proj X"}, lead)
    assert lead.team_name == "proj-x"
    store = TeamStore(layout)
    store.add_member("proj-x", NewMember(name="alice", tmux_pane_id="%1", backend_type="tmux"))
    store.add_member("proj-x", NewMember(name="bob", backend_type="in-process"))
    return "proj-x"


def mate(layout: Layout, tmp_path: Path, name: str, team: str, color: str) -> ToolContext:
    return ToolContext(
        cwd=tmp_path, store=FileStore(layout), session_id=f"s-{name}", agent_name=name, team_name=team, color=color,
        is_lead=False,
    )  # fmt: skip


def inbox(layout: Layout, team: str, agent: str) -> list[Envelope]:
    return Mailbox(layout).read_live(team, agent)


# -- tasks --------------------------------------------------------------------------------------------------


def test_task_tools_print_what_claude_code_prints(lead: ToolContext, layout: Layout) -> None:
    assert ok(TaskCreateTool, {"subject": "Write parser", "description": "Parse it"}, lead) == (
        "Task #1 created successfully: Write parser"
    )
    assert ok(TaskCreateTool, {"subject": "Write tests", "description": "Add tests"}, lead) == (
        "Task #2 created successfully: Write tests"
    )
    update = {"taskId": "2", "owner": "alice", "addBlockedBy": ["1"]}
    assert ok(TaskUpdateTool, update, lead) == "Updated task #2 owner, blockedBy"
    assert ok(TaskGetTool, {"taskId": "2"}, lead) == (
        "Task #2: Write tests\nStatus: pending\nDescription: Add tests\nOwner: alice\nBlocked by: #1"
    )
    assert ok(TaskListTool, {}, lead) == "#1 [pending] Write parser\n#2 [pending] Write tests (alice) [blocked by #1]"
    assert ok(TaskGetTool, {"taskId": 1}, lead).endswith("Blocks: #2")


def test_without_a_team_tasks_belong_to_the_session(lead: ToolContext, layout: Layout) -> None:
    ok(TaskCreateTool, {"subject": "Solo", "description": ""}, lead)
    assert (layout.task_dir(SESSION) / "1.json").is_file()
    assert [t.subject for t in TaskStore(layout).list_tasks(SESSION)] == ["Solo"]


def test_in_a_team_tasks_belong_to_the_team_and_owners_are_told(team: str, lead: ToolContext, layout: Layout) -> None:
    ok(TaskCreateTool, {"subject": "Write parser", "description": "Parse", "activeForm": "Writing parser"}, lead)
    assert TaskStore(layout).get(team, "1").active_form == "Writing parser"
    ok(TaskUpdateTool, {"taskId": "#1", "owner": "bob"}, lead)
    [env] = inbox(layout, team, "bob")
    msg = parse_message(env.text)
    assert isinstance(msg, TaskAssignment) and (msg.task_id, msg.assigned_by) == ("1", "team-lead")


def test_a_teammate_claiming_a_task_sends_no_assignment(team: str, layout: Layout, tmp_path: Path) -> None:
    alice = mate(layout, tmp_path, "alice", team, "blue")
    ok(TaskCreateTool, {"subject": "Mine", "description": ""}, alice)
    assert ok(TaskUpdateTool, {"taskId": "1", "owner": "alice", "status": "in_progress"}, alice) == (
        "Updated task #1 owner, status"
    )
    assert inbox(layout, team, "alice") == []


def test_task_errors_are_results(lead: ToolContext) -> None:
    ok(TaskCreateTool, {"subject": "a", "description": ""}, lead)
    ok(TaskCreateTool, {"subject": "b", "description": ""}, lead)
    assert "not found" in err(TaskGetTool, {"taskId": "9"}, lead)
    assert "not found" in err(TaskUpdateTool, {"taskId": "9", "status": "completed"}, lead)
    ok(TaskUpdateTool, {"taskId": "2", "addBlockedBy": ["1"]}, lead)
    assert "cycle" in err(TaskUpdateTool, {"taskId": "1", "addBlockedBy": ["2"]}, lead)
    assert "status" in err(TaskUpdateTool, {"taskId": "1", "status": "done"}, lead)
    assert "subject" in err(TaskCreateTool, {"description": "no subject"}, lead)
    assert "taskId" in err(TaskGetTool, {}, lead)
    assert "metadata" in err(TaskCreateTool, {"subject": "x", "metadata": "nope"}, lead)


def test_unchanged_deleted_and_hidden_tasks(lead: ToolContext) -> None:
    ok(TaskCreateTool, {"subject": "a", "description": ""}, lead)
    assert "unchanged" in ok(TaskUpdateTool, {"taskId": "1", "subject": "a"}, lead)
    ok(TaskCreateTool, {"subject": "internal", "description": "", "metadata": {"_internal": True}}, lead)
    assert ok(TaskListTool, {}, lead) == "#1 [pending] a"
    assert ok(TaskUpdateTool, {"taskId": "1", "status": "deleted"}, lead) == "Updated task #1 status"
    ok(TaskUpdateTool, {"taskId": "2", "status": "deleted"}, lead)
    assert ok(TaskListTool, {}, lead) == "No tasks found"


def _board(layout: Layout, team: str, n: int, subject: str = "Implement the parser's case {i} and test it") -> None:
    """`n` tasks: the first nine tenths completed, then in progress every fifth, the rest pending, every third of
    those blocked by the task before it."""
    done = n * 9 // 10
    docs: list[dict[str, Any]] = []
    for i in range(1, n + 1):
        status = "completed" if i <= done else ("in_progress" if i % 5 == 0 else "pending")
        doc: dict[str, Any] = {"subject": subject.format(i=i), "status": status}
        if status != "pending":
            doc["owner"] = "alice" if i % 2 else "bob"
        if status == "pending" and i % 3 == 0:
            doc["blockedBy"] = [str(i - 1)]
        docs.append(doc)
    write_board(layout, team, docs)


def test_task_list_on_a_large_board_sends_counts_and_the_open_tasks(
    team: str, lead: ToolContext, layout: Layout
) -> None:
    """Past Claude Code's 50 000 characters inline, the model gets the counts and the open tasks (in progress, then
    ready to claim) in claude's line format, about 2 000 tokens, not 3 000 lines; the structured result has them all
    with claude's fields."""
    _board(layout, team, 3000)
    result = call(TaskListTool, {}, lead)
    whole = "\n".join(task_lines(TaskStore(layout).list_tasks(team)))
    assert len(whole) > FULL_LIST_CHARS and not result.is_error
    assert len(result.content) <= SUMMARY_CHARS
    head, *lines = result.content.splitlines()
    assert head.startswith(
        f"3000 tasks, too many to list whole ({len(whole.encode()) / 1024:.1f} KB): 2700 completed, "
    )
    pending = [i for i in range(2701, 3001) if i % 5]
    ready = [i for i in pending if i % 3 or str(i - 1) not in {str(j) for j in range(2701, 3001)}]
    assert f"60 in progress, {len(pending)} pending, {len(ready)} of them ready to claim." in head
    shown, tail = lines[:-1], lines[-1]
    by_id = dict(zip((t.id for t in TaskStore(layout).list_tasks(team)), whole.splitlines(), strict=True))
    working = [i for i in range(2701, 3001) if i % 5 == 0]
    assert shown == [by_id[str(i)] for i in [*working, *ready][: len(shown)]]  # claude's lines: who does what first,
    assert shown[60] == "#2701 [pending] Implement the parser's case 2701 and test it"  # then the next picks
    assert tail == f"... and {300 - len(shown)} more open tasks, not shown"
    assert "[completed]" not in result.content
    data = result.data
    assert data is not None and len(data["tasks"]) == 3000
    assert data["tasks"][2702] == {"id": "2703", "subject": "Implement the parser's case 2703 and test it",
                                   "status": "pending", "blockedBy": ["2702"]}  # fmt: skip
    assert data["tasks"][0] == {"id": "1", "subject": "Implement the parser's case 1 and test it",
                                "status": "completed", "owner": "alice", "blockedBy": []}  # fmt: skip


def test_task_list_shows_a_list_up_to_the_limit_whole(team: str, lead: ToolContext, layout: Layout) -> None:
    _board(layout, team, 450, subject="Task {i:05} " + "x" * 60)
    whole = "\n".join(task_lines(TaskStore(layout).list_tasks(team)))
    assert 40_000 < len(whole) <= FULL_LIST_CHARS
    assert ok(TaskListTool, {}, lead) == whole


def test_task_list_reads_each_task_file_once(team: str, lead: ToolContext, layout: Layout) -> None:
    """The lease sweep and the listing share one read of the board (it was two)."""
    _board(layout, team, 50)
    with counting_task_reads() as reads:
        ok(TaskListTool, {}, lead)
    assert reads == {str(i): 1 for i in range(1, 51)}


# -- team ---------------------------------------------------------------------------------------------------


def test_team_create(lead: ToolContext, layout: Layout) -> None:
    lead.hooks.model = "claude-opus-4-8"
    data = ok_json(TeamCreateTool, {"team_name": "My Team!", "description": "d", "agent_type": "planner"}, lead)
    assert data == {
        "team_name": "my-team-",
        "team_file_path": str(layout.config_file("my-team-")),
        "lead_agent_id": "team-lead@my-team-",
    }
    assert lead.team_name == "my-team-" and lead.is_lead
    config = TeamStore(layout).read("my-team-")
    [member] = config.members
    assert (config.lead_session_id, config.description) == (SESSION, "d")
    assert (member.name, member.agent_type, member.cwd, member.model) == (
        "team-lead",
        "planner",
        str(lead.cwd),
        "claude-opus-4-8",
    )
    assert layout.task_dir("my-team-").is_dir()


def test_one_team_per_session(lead: ToolContext, layout: Layout) -> None:
    ok(TeamCreateTool, {"team_name": "one"}, lead)
    assert err(TeamCreateTool, {"team_name": "two"}, lead) == 'Already leading team "one". Use TeamDelete first.'
    again = ToolContext(cwd=lead.cwd, store=FileStore(layout), session_id=SESSION)  # e.g. a resumed session
    assert "already leads team" in err(TeamCreateTool, {"team_name": "two"}, again)
    assert not TeamStore(layout).exists("two")


def test_team_delete_refuses_while_teammates_remain(team: str, lead: ToolContext, layout: Layout) -> None:
    refusal = err(TeamDeleteTool, {}, lead)
    assert "2 teammate(s) still in it: alice, bob" in refusal and "shutdown_request" in refusal
    alice = mate(layout, lead.cwd, "alice", team, "blue")
    assert "Only the lead" in err(TeamDeleteTool, {}, alice)
    store = TeamStore(layout)
    store.remove_member(team, "alice")
    store.remove_member(team, "bob")
    data = ok_json(TeamDeleteTool, {}, lead)
    assert data == {
        "success": True, "message": 'Cleaned up directories and worktrees for team "proj-x"', "team_name": "proj-x"
    }  # fmt: skip
    assert lead.team_name is None
    assert not layout.team_dir(team).exists() and not layout.task_dir(team).exists()
    assert ok_json(TeamDeleteTool, {}, lead)["success"] is True  # nothing left to delete
    ok(TeamCreateTool, {"team_name": "next"}, lead)  # and the session may lead a new team


# -- messages -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        {"type": "message", "recipient": "alice", "content": "Start on task 1", "summary": "start task 1"},
        {"to": "alice", "message": "Start on task 1", "summary": "start task 1"},
    ],
    ids=["seed-shape", "cc-2.1-shape"],
)
def test_message_from_the_lead(team: str, lead: ToolContext, layout: Layout, args: dict[str, Any]) -> None:
    data = ok_json(SendMessageTool, args, lead)
    [env] = inbox(layout, team, "alice")
    assert data == {
        "success": True,
        "message": "Message sent to alice's inbox",
        "msg_id": env.msg_id,
        "routing": {
            "sender": "team-lead", "target": "@alice", "targetColor": "blue", "summary": "start task 1",
            "content": "Start on task 1",
        },
    }  # fmt: skip
    assert (env.sender, env.text, env.summary, env.color) == ("team-lead", "Start on task 1", "start task 1", None)
    assert list(json.loads(call(SendMessageTool, args, lead).content)) == ["success", "message", "msg_id", "routing"]


def test_message_from_a_teammate_carries_its_colour(team: str, layout: Layout, tmp_path: Path) -> None:
    alice = mate(layout, tmp_path, "alice", team, "blue")
    data = ok_json(SendMessageTool, {"to": "team-lead", "message": "done with #1"}, alice)
    assert data["routing"] == {
        "sender": "alice",
        "senderColor": "blue",
        "target": "@team-lead",
        "content": "done with #1",
    }
    [env] = inbox(layout, team, "team-lead")
    assert (env.sender, env.color) == ("alice", "blue")


def test_unknown_recipient_is_refused_with_the_members(team: str, lead: ToolContext, layout: Layout) -> None:
    message = err(SendMessageTool, {"type": "message", "recipient": "carol", "content": "hi", "summary": "s"}, lead)
    assert "'carol'" in message and "team-lead, alice, bob" in message
    assert not layout.inbox_file(team, "carol").exists()


def test_message_input_errors(team: str, lead: ToolContext) -> None:
    assert "unknown message type" in err(SendMessageTool, {"type": "shout", "recipient": "alice"}, lead)
    assert "recipient" in err(SendMessageTool, {"type": "message", "content": "hi"}, lead)
    assert "content" in err(SendMessageTool, {"type": "message", "recipient": "alice"}, lead)
    assert "is you" in err(SendMessageTool, {"to": "team-lead", "message": "me"}, lead)
    assert "approve" in err(SendMessageTool, {"type": "plan_approval_response", "recipient": "alice",
                                              "request_id": "r", "approve": "maybe"}, lead)  # fmt: skip


def test_without_a_team_send_message_says_a_team_is_needed(lead: ToolContext) -> None:
    assert "needs a team" in err(SendMessageTool, {"to": "alice", "message": "hi"}, lead)


def test_broadcast(team: str, lead: ToolContext, layout: Layout, tmp_path: Path) -> None:
    data = ok_json(SendMessageTool, {"type": "broadcast", "content": "stand up", "summary": "sync"}, lead)
    assert data == {"success": True, "message": "Message broadcast to 2 teammate(s): alice, bob",
                    "recipients": ["alice", "bob"]}  # fmt: skip
    assert [e.text for e in inbox(layout, team, "bob")] == ["stand up"]
    bob = mate(layout, tmp_path, "bob", team, "green")
    ok(SendMessageTool, {"to": "*", "message": "from bob"}, bob)
    assert [(e.sender, e.color) for e in inbox(layout, team, "team-lead")] == [("bob", "green")]
    assert [e.text for e in inbox(layout, team, "alice")] == ["stand up", "from bob"]


@pytest.mark.parametrize(
    "args",
    [
        {"type": "shutdown_request", "recipient": "alice", "content": "All done"},
        {"to": "alice", "message": {"type": "shutdown_request", "reason": "All done"}},
    ],
    ids=["seed-shape", "cc-2.1-shape"],
)
def test_shutdown_request(team: str, lead: ToolContext, layout: Layout, args: dict[str, Any]) -> None:
    data = ok_json(SendMessageTool, args, lead)
    request_id = data["request_id"]
    assert re.fullmatch(r"shutdown-\d{13}@alice", request_id)
    assert data == {
        "success": True, "message": f"Shutdown request sent to alice. Request ID: {request_id}",
        "request_id": request_id, "target": "alice",
    }  # fmt: skip
    [env] = inbox(layout, team, "alice")
    msg = parse_message(env.text)
    assert isinstance(msg, ShutdownRequest)
    assert (msg.request_id, msg.sender, msg.reason) == (request_id, "team-lead", "All done")
    assert list(json.loads(env.text)) == ["type", "requestId", "from", "reason", "timestamp"]


@pytest.mark.parametrize(
    "args",
    [
        {"type": "shutdown_response", "request_id": "shutdown-1795342378465@alice", "approve": True},
        {
            "to": "team-lead",
            "message": {"type": "shutdown_response", "request_id": "shutdown-1795342378465@alice", "approve": True},
        },
    ],
    ids=["seed-shape", "cc-2.1-shape"],
)
def test_shutdown_approved(team: str, layout: Layout, tmp_path: Path, args: dict[str, Any]) -> None:
    alice = mate(layout, tmp_path, "alice", team, "blue")
    result = call(SendMessageTool, args, alice)
    assert result.content == (
        '{"success":true,"message":"Shutdown approved. Sent confirmation to team-lead. Agent alice is now exiting.",'
        '"request_id":"shutdown-1795342378465@alice"}'
    )
    assert alice.signals.exit_requested is True
    [env] = inbox(layout, team, "team-lead")
    msg = parse_message(env.text)
    assert isinstance(msg, ShutdownApproved)
    assert (msg.request_id, msg.sender, msg.pane_id, msg.backend_type) == (
        "shutdown-1795342378465@alice",
        "alice",
        "%1",
        "tmux",
    )
    assert list(json.loads(env.text)) == ["type", "requestId", "from", "timestamp", "paneId", "backendType"]
    assert (env.sender, env.color) == ("alice", "blue")


def test_shutdown_rejected(team: str, layout: Layout, tmp_path: Path) -> None:
    bob = mate(layout, tmp_path, "bob", team, "green")
    base = {"type": "shutdown_response", "request_id": "shutdown-1@bob", "approve": False}
    assert "reason" in err(SendMessageTool, base, bob)
    data = ok_json(SendMessageTool, {**base, "content": "still on #2"}, bob)
    assert data["success"] is True and "still on #2" in data["message"]
    assert bob.signals.exit_requested is False
    [env] = inbox(layout, team, "team-lead")
    msg = parse_message(env.text)
    assert isinstance(msg, ShutdownRejected) and (msg.request_id, msg.reason) == ("shutdown-1@bob", "still on #2")


def test_the_lead_does_not_answer_shutdown_requests(team: str, lead: ToolContext) -> None:
    args = {"type": "shutdown_response", "request_id": "x", "approve": True}
    assert "only teammates" in err(SendMessageTool, args, lead)
    assert lead.signals.exit_requested is False


def test_plan_approval_response(team: str, lead: ToolContext, layout: Layout, tmp_path: Path) -> None:
    approve = {"type": "plan_approval_response", "recipient": "alice", "request_id": "plan_approval-1@alice",
               "approve": True}  # fmt: skip
    alice = mate(layout, tmp_path, "alice", team, "blue")
    assert "Only the team lead" in err(SendMessageTool, approve, alice)
    assert ok_json(SendMessageTool, approve, lead)["request_id"] == "plan_approval-1@alice"
    reject = {"to": "alice", "message": {"type": "plan_approval_response", "request_id": "plan_approval-2@alice",
                                         "approve": False, "feedback": "add tests"}}  # fmt: skip
    ok(SendMessageTool, reject, lead)
    first, second = (parse_message(e.text) for e in inbox(layout, team, "alice"))
    assert isinstance(first, PlanApprovalResponse) and isinstance(second, PlanApprovalResponse)
    assert (first.approved, first.permission_mode, first.feedback) == (True, "default", None)
    assert (second.approved, second.feedback, second.request_id) == (False, "add tests", "plan_approval-2@alice")


# -- plan mode ----------------------------------------------------------------------------------------------


def test_exit_plan_mode_as_a_teammate_asks_the_lead(team: str, layout: Layout, tmp_path: Path) -> None:
    alice = mate(layout, tmp_path, "alice", team, "blue")
    alice.plan_file = tmp_path / "plan.md"
    assert "no plan yet" in err(ExitPlanModeTool, {}, alice)
    alice.plan_file.write_text("1. parse\n2. test\n")
    result = ok(ExitPlanModeTool, {}, alice)
    request_id = alice.signals.awaiting_plan_approval
    assert request_id is not None
    assert re.fullmatch(r"plan_approval-\d{13}@alice", request_id) and request_id in result
    [env] = inbox(layout, team, "team-lead")
    msg = parse_message(env.text)
    assert isinstance(msg, PlanApprovalRequest)
    assert (msg.sender, msg.plan_file_path, msg.plan_content, msg.request_id) == (
        "alice",
        str(alice.plan_file),
        "1. parse\n2. test\n",
        request_id,
    )


def test_exit_plan_mode_for_the_lead_or_a_solo_agent_asks_the_person(lead: ToolContext, layout: Layout) -> None:
    assert "Nobody can approve" in err(ExitPlanModeTool, {"plan": "1. do it"}, lead)  # no runtime hook
    asked: list[str] = []
    verdict = [False]

    def approve(plan: str) -> bool:
        asked.append(plan)
        return verdict[0]

    lead.hooks.approve_plan = approve
    rejected = call(ExitPlanModeTool, {"plan": "1. do it"}, lead)
    assert not rejected.is_error and "did not approve" in rejected.content
    verdict[0] = True
    result = call(ExitPlanModeTool, {"plan": "1. do it"}, lead)
    assert not result.is_error and "approved" in result.content and "1. do it" in result.content
    assert asked == ["1. do it", "1. do it"]
    assert result.data is not None and result.data["plan"] == "1. do it" and result.data["approved"] is True
    assert not layout.teams_dir.exists() or not any(layout.teams_dir.iterdir())
