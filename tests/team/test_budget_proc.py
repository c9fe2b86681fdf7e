"""Budgets in real processes: an `agentteams -p` lead spawns alice (in-process) with `max_budget_tokens: 2000`
through the real SDK and the scripted server, whose answers to alice report 900, 800 and 500 tokens; the lead's model
hears of 85 % once, alice is asked to shut down and approves, and `agentteams status --json` meanwhile shows her
tokens, cost and budget %."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.live_team import members
from tests.support.team_run import lead_env
from tests.support.team_script import REQUEST_ID, TEAM, say, tool, waiting
from tests.support.wait import wait_until

ME = "Your name is alice"
WARNING = "Teammate alice has spent 85% of its budget (1700 of 2000 tokens)."


def spent(turn: dict[str, Any], tokens: int, delay_ms: int = 0) -> dict[str, Any]:
    return {**turn, "usage": {"input_tokens": tokens - 100, "output_tokens": 100}, "delay_ms": delay_ms}


def scenario() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("Task", name="alice", team_name=TEAM, description="worker", prompt="START-alice", max_budget_tokens=2000),
        waiting("Started."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("LEAD-DONE"),
    ]
    approve = tool("SendMessage", to="team-lead", message={"type": "shutdown_response", "request_id": REQUEST_ID,
                                                           "approve": True})  # fmt: skip
    return {"routes": [
        {"name": "alice-shutdown", "match": {"system": ME, "last_prompt": "shutdown_request"},
         "turns": [{**approve, "delay_ms": 3000}]},  # time for `status` to see her past her budget
        {"name": "alice", "match": {"system": ME, "last_prompt": "START-alice"},
         "turns": [spent(tool("TaskList"), 900), spent(tool("TaskList"), 800),
                   spent(say("Done."), 500, delay_ms=3500)]},  # the lead sees 85 % before 110 % (its team thread's
        # first round can wait ~1.6 s behind the imports of a process starting under load)
        {"name": "alice-other", "match": {"system": ME}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_a_teammate_past_its_budget_is_warned_asked_to_stop_and_shown(
    cli: Cli, config_root: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with MockServer(scenario()) as server:
        env = lead_env(config_root, server)
        lead = cli.popen("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", env=env,
                         cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        seen: list[dict[str, Any]] = []

        def past_budget() -> bool:
            assert lead.poll() is None, "the lead ended before status saw alice past her budget"
            proc = cli("status", TEAM, "--json")  # fails until the lead has made the team
            alice = members(json.loads(proc.stdout)).get("alice") if proc.returncode == 0 else None
            seen[:] = [alice] if alice else seen
            return bool(alice and (alice["budget_percent"] or 0) >= 100)

        wait_until(past_budget, 30, "status to show alice past her budget", interval=0.1)
        out, err = lead.communicate(timeout=60)
        lead_bodies = [r["body"] for r in server.requests if r.get("route") == "lead"]
        shutdowns = [r for r in server.requests if r.get("route") == "alice-shutdown"]
    assert lead.returncode == 0, err
    assert "LEAD-DONE" in out
    alice = seen[0]
    assert (alice["input_tokens"] + alice["output_tokens"], alice["budget_tokens"], alice["budget_percent"]) == (
        2200, 2000, 110)  # fmt: skip
    assert alice["cost_usd"] > 0
    last = json.dumps(max(lead_bodies, key=lambda b: len(b["messages"]))["messages"])
    assert last.count(WARNING) == 1  # once, though alice stayed over 80 % until she left
    assert "Teammate alice was asked to shut down: You have used your whole budget (2200 of 2000 tokens)." in last
    assert len(shutdowns) == 1
