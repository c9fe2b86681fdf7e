"""Budgets held after every model answer (issue 32, item 6): a teammate on a 60-call turn that crosses its own budget
(the spawn's max_budget_tokens) or its team's (teamBudget.maxTokens) stops at the next tool boundary, not after the
turn: its tools past that answer never run. The lead is told (at 80 % and at 100 %), asks it to shut down, and the run
ends. Real processes: an `agentteams -p` lead, an in-process teammate, the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.team_run import lead_env
from tests.support.team_script import REQUEST_ID, TEAM, say, tool, waiting

ME = "Your name is alice"
CALLS = 60
EACH = 100  # tokens each of alice's answers reports


def scenario(own_budget: int | None) -> dict[str, Any]:
    budget = {"max_budget_tokens": own_budget} if own_budget else {}
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("Task", name="alice", team_name=TEAM, description="worker", prompt="START-alice", **budget),
        waiting("Started."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("LEAD-DONE"),
    ]
    approve = tool("SendMessage", to="team-lead", message={"type": "shutdown_response", "request_id": REQUEST_ID,
                                                           "approve": True})  # fmt: skip
    work = [{**tool("Bash", command=f"echo {i} >> calls.log"), "usage": {"input_tokens": EACH - 10,
             "output_tokens": 10}} for i in range(CALLS)]  # fmt: skip
    return {"routes": [
        {"name": "alice-shutdown", "match": {"system": ME, "last_prompt": "shutdown_request"}, "turns": [approve] * 2},
        {"name": "alice", "match": {"system": ME, "last_prompt": "START-alice"}, "turns": [*work, say("All done.")]},
        {"name": "alice-other", "match": {"system": ME}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


@pytest.mark.parametrize("which", ["own", "team"])
def test_a_long_turn_stops_at_the_tool_boundary_where_its_budget_runs_out(
    cli: Cli, config_root: Path, tmp_path: Path, which: str
) -> None:
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    if which == "team":  # the lead's tokens count too: a budget alice alone would cross at her 60th answer
        (work / ".claude" / "settings.json").write_text(json.dumps({"teamBudget": {"maxTokens": CALLS * EACH}}))
    with MockServer(scenario(2000 if which == "own" else None)) as server:
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=work,
                   env=lead_env(config_root, server), timeout=120)  # fmt: skip
        alice = [r for r in server.requests if r.get("route") == "alice"]
        lead_bodies = [r["body"] for r in server.requests if r.get("route") == "lead"]
    assert proc.returncode == 0, proc.stderr
    assert "LEAD-DONE" in proc.stdout
    ran = (work / "calls.log").read_text().split()
    # 2000 tokens at 100 each: the 20th answer crosses her own (the team's: sooner, the lead's tokens count too), and
    # its tool is not run; before, all 60 ran and the turn ended on its own
    assert len(alice) < CALLS if which == "team" else len(alice) == 20, len(alice)
    assert len(ran) == len(alice) - 1, ran
    seen = json.dumps(max(lead_bodies, key=lambda b: len(b["messages"]))["messages"])
    assert "was asked to shut down" in seen and "of its budget" in seen
    assert "its budget is spent; its turn stopped before running more tools" in proc.stderr
