"""A scripted team scenario for the scripted Messages API server: a lead, two teammates, three tasks.

Tasks 1 and 2 are independent, task 3 is blocked by both; each teammate claims whatever is open.
"""

from __future__ import annotations

from typing import Any

TASK_ID = r"{{re:(?s).*You claimed task #(\d+)}}"  # greedy: the newest claim in the conversation
REQUEST_ID = r'{{re:"requestId":"([^"]+)"}}'
TEAM = "proj"


def tool(tool_name: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": tool_name, "input": args}]}


def say(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def waiting(text: str) -> dict[str, Any]:
    """A remark before a turn that waits (for the teammates' shutdowns, say): skipped when what that turn waits for is
    already in the request, as a model would go straight on (else a -p lead may end on the remark, all news seen)."""
    return {**say(text), "passable": True}


def lead_turns(names: tuple[str, str], *, plan_for: str | None = None) -> list[dict[str, Any]]:
    spawn = [
        tool("Task", name=n, team_name=TEAM, description=f"teammate {n}",
             prompt=f"You are {n}. Work through the task list with your teammates. START-{n}",
             **({"mode": "plan"} if n == plan_for else {}))
        for n in names
    ]  # fmt: skip
    shutdown = [tool("SendMessage", to=n, message={"type": "shutdown_request", "reason": "all done"}) for n in names]
    return [
        tool("TeamCreate", team_name=TEAM, description="parser project"),
        tool("TaskCreate", subject="Write parser", description="parse the input"),
        tool("TaskCreate", subject="Write lexer", description="split the input"),
        tool("TaskCreate", subject="Integrate", description="join parser and lexer"),
        tool("TaskUpdate", taskId="3", addBlockedBy=["1", "2"]),
        *spawn,
        say("The team is at work."),
        {**shutdown[0], "wait_for": "finished task #3"},
        *shutdown[1:],
        waiting("Waiting for the team to shut down."),
        {**tool("TeamDelete"), "wait_for": [f"Teammate {n} shut down" for n in names]},
        say("All done: parser, lexer and integration finished. LEAD-DONE"),
    ]


def claim_turns(me: str, peer: str) -> list[dict[str, Any]]:
    one = [
        tool("Bash", command=f"echo task-{TASK_ID}-by-{me} >> work.log"),
        tool("TaskUpdate", taskId=TASK_ID, status="completed"),
        tool("SendMessage", to=peer, message=f"I finished task #{TASK_ID}", summary=f"task #{TASK_ID} done"),
        tool("SendMessage", to="team-lead", message=f"finished task #{TASK_ID}", summary="task done"),
        say("Task finished."),
    ]
    return one * 3


def shutdown_route(me: str) -> dict[str, Any]:
    """Teammate `me` approves a shutdown request (its id echoed back), twice in case the first is retried."""
    approve = {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True}
    return {"name": f"{me}-shutdown", "match": {"system": f"Your name is {me}", "last_prompt": "shutdown_request"},
            "turns": [tool("SendMessage", to="team-lead", message=approve)] * 2}  # fmt: skip


def teammate_routes(me: str, peer: str) -> list[dict[str, Any]]:
    system = f"Your name is {me}"
    return [
        shutdown_route(me),
        {"name": f"{me}-claim", "match": {"system": system, "last_prompt": "You claimed task #"},
         "turns": claim_turns(me, peer)},
        {"name": f"{me}-other", "match": {"system": system}, "turns": [], "idle": "Noted."},
    ]  # fmt: skip


def team_scenario(names: tuple[str, str] = ("alice", "bob")) -> dict[str, Any]:
    a, b = names
    return {
        "routes": [
            *teammate_routes(a, b),
            *teammate_routes(b, a),
            {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead_turns(names),
             "idle": "Noted."},
        ]
    }  # fmt: skip
