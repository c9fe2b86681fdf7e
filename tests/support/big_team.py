"""A scripted team of N teammates for the scale tests: the lead makes N tasks and spawns w00..w<N-1>; each
teammate claims a task by itself and holds it until every task is claimed (a Bash barrier on the task files), so
all N are at work at once; then each completes its task, reports, and approves the lead's shutdown request."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from tests.support.team_script import REQUEST_ID, TASK_ID, TEAM, say, tool, waiting

BARRIER_SECONDS = 120  # the Bash barrier gives up after this (the test's own deadline is shorter)


def names(n: int) -> list[str]:
    """w00, w01, ...: zero-padded so no name's marker is a prefix of another's (w1 / w10)."""
    return [f"w{k:02d}" for k in range(n)]


def done_mark(name: str) -> str:
    return f"DONE-{name}-END"


def barrier(task_dir: Path, n: int) -> str:
    """A shell loop that returns once `n` task files are in progress or completed (none completes before)."""
    files = shlex.quote(str(task_dir)) + "/[0-9]*.json"
    count = f'grep -lE \'"status": ?"(in_progress|completed)"\' {files} 2>/dev/null | wc -l'
    give_up = f"[ $i -gt {BARRIER_SECONDS * 10} ] && exit 7"
    return f"i=0; until [ $({count}) -ge {n} ]; do i=$((i+1)); {give_up}; sleep 0.1; done"


def lead_turns(n: int) -> list[dict[str, Any]]:
    team = names(n)
    tasks = [tool("TaskCreate", subject=f"Part {k + 1}", description=f"part {k + 1} of the job") for k in range(n)]
    spawn = [
        tool("Task", name=w, team_name=TEAM, description=f"worker {w}", prompt=f"You are {w}. START-{w}")
        for w in team
    ]  # fmt: skip
    stop = [tool("SendMessage", to=w, message={"type": "shutdown_request", "reason": "all done"}) for w in team]
    return [
        tool("TeamCreate", team_name=TEAM, description="a big team"),
        *tasks,
        *spawn,
        say("The team is at work."),
        {**stop[0], "wait_for": [done_mark(w) for w in team]},
        *stop[1:],
        waiting("Waiting for the team to shut down."),
        {**tool("TeamDelete"), "wait_for": [f"Teammate {w} shut down" for w in team]},
        say("All parts done. LEAD-DONE"),
    ]


def teammate_routes(me: str, task_dir: Path, n: int) -> list[dict[str, Any]]:
    system = f"Your name is {me}"
    work = [
        tool("Bash", command=barrier(task_dir, n)),
        tool("Bash", command=f"echo task-{TASK_ID}-by-{me} >> work.log"),
        tool("TaskUpdate", taskId=TASK_ID, status="completed"),
        tool("SendMessage", to="team-lead", message=f"{done_mark(me)} task #{TASK_ID}", summary="task done"),
        say("Task finished."),
    ]
    return [
        {"name": f"{me}-shutdown", "match": {"system": system, "last_prompt": "shutdown_request"},
         "turns": [tool("SendMessage", to="team-lead",
                        message={"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True})] * 2},
        {"name": f"{me}-claim", "match": {"system": system, "last_prompt": "You claimed task #"}, "turns": work},
        {"name": f"{me}-other", "match": {"system": system}, "turns": [], "idle": "Noted."},
    ]  # fmt: skip


def big_team_scenario(n: int, task_dir: Path) -> dict[str, Any]:
    """The script for a lead and `n` teammates; `task_dir` is the team's task directory (the barrier reads it)."""
    routes = [r for w in names(n) for r in teammate_routes(w, task_dir, n)]
    lead = {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead_turns(n),
            "idle": "Noted."}  # fmt: skip
    return {"routes": [*routes, lead]}
