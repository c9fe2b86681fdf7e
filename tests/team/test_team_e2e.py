"""Teams end to end: real processes, a private tmux server, the real SDK against our scripted server.

The lead is `agentteams -p` (it shuts its team down before answering); teammates run in tmux panes or as threads.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.presence import read_presence
from tests.support.cli import Cli
from tests.support.procs import pid_alive
from tests.support.team_run import (
    Run,
    assert_nothing_left,
    check_team_run,
    finish,
    in_her_pane,
    kill_scenario,
    lead_env,
    lead_in_tmux,
)
from tests.support.team_script import REQUEST_ID, TEAM, say, team_scenario, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until


def test_team_in_tmux_panes(
    cli: Cli, config_root: Path, layout: Layout, work: Path, tmp_path: Path, tmux: Tmux
) -> None:
    with MockServer(team_scenario()) as server:
        env = lead_env(config_root, server)
        _pane, rc = lead_in_tmux(tmux, cli, env, work, tmp_path, "--teammate-mode", "tmux")
        run = finish(rc, tmp_path, server)
    check_team_run(run, work)
    assert_nothing_left(layout, config_root, tmux)


def test_team_in_process(cli: Cli, config_root: Path, layout: Layout, work: Path) -> None:
    with MockServer(team_scenario()) as server:
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=work,
                   env=lead_env(config_root, server), timeout=90)  # fmt: skip
        run = Run(proc.returncode, proc.stdout, proc.stderr, server)
    check_team_run(run, work)
    assert_nothing_left(layout, config_root)


@pytest.mark.parametrize("how", ["kill -9", "pane closed"])
def test_dead_teammate_is_noticed_within_2s(
    cli: Cli, config_root: Path, layout: Layout, work: Path, tmp_path: Path, tmux: Tmux, how: str
) -> None:
    from agentteams.store.file.tasks import TaskStore
    from agentteams.store.file.teams import TeamStore

    tasks = TaskStore(layout)
    with MockServer(kill_scenario()) as server:
        env = lead_env(config_root, server)
        _pane, rc = lead_in_tmux(tmux, cli, env, work, tmp_path, "--teammate-mode", "tmux")
        wait_until(lambda: "alice-claim" in [r.get("route") for r in server.arrivals], 30, "alice to claim the task")
        task = tasks.get(TEAM, "1")
        assert (task.owner, task.status) == ("alice", "in_progress")
        # the runtime records "working" beside the model request, so the request can arrive first
        # and from her pane (in_her_pane says why)
        wait_until(lambda: in_her_pane(read_presence(layout, TEAM, "alice")), 5, "working, in her pane")
        presence = read_presence(layout, TEAM, "alice")
        member = TeamStore(layout).read(TEAM).member("alice")
        assert presence is not None and member is not None
        if how == "kill -9":
            os.kill(presence.pid, signal.SIGKILL)  # mid-turn: its model request is still open
        else:
            tmux.run("kill-pane", "-t", str(member.tmux_pane_id))
        killed = time.monotonic()

        def unassigned() -> bool:
            t = tasks.get(TEAM, "1")
            return t.owner is None and t.status == "pending"

        wait_until(unassigned, 5, "the lead to unassign the dead teammate's task")
        noticed = time.monotonic() - killed
        assert noticed < 2.0, f"the lead took {noticed:.2f} s to notice"
        wait_until(lambda: not pid_alive(presence.pid), 5, "the teammate process to end with its pane")
        run = finish(rc, tmp_path, server)
    assert run.rc == 0, run.err
    assert "LEAD-DONE" in run.out
    assert_nothing_left(layout, config_root, tmux)


def plan_scenario() -> dict[str, Any]:
    approve = {"type": "plan_approval_response", "request_id": r'{{re:"requestId":"(plan_approval[^"]+)"}}'}
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("Task", name="alice", team_name=TEAM, description="planner", prompt="You are alice. START-alice",
             mode="plan"),
        say("Started."),
        {**tool("SendMessage", to="alice", message={**approve, "approve": False, "feedback": "Add a test step"}),
         "wait_for": "plan_approval_request"},
        say("Feedback sent."),
        {**tool("SendMessage", to="alice", message={**approve, "approve": True}), "wait_for": "PLAN-V2"},
        say("Approved."),
        {**tool("SendMessage", to="alice", message={"type": "shutdown_request"}), "wait_for": "WROTE-IT"},
        waiting("Waiting."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("LEAD-DONE"),
    ]  # fmt: skip
    me = "Your name is alice"
    return {"routes": [
        {"name": "alice-shutdown", "match": {"system": me, "last_prompt": "shutdown_request"},
         "turns": [tool("SendMessage", to="team-lead", message={"type": "shutdown_response",
                                                                  "request_id": REQUEST_ID, "approve": True})]},
        {"name": "alice-rejected", "match": {"system": me, "last_prompt": "[Plan Rejected]"},
         "turns": [tool("ExitPlanMode", plan="PLAN-V2: write out.txt, then check it"), say("Resubmitted.")]},
        {"name": "alice-approved", "match": {"system": me, "last_prompt": "[Plan Approved]"},
         "turns": [tool("Write", file_path="out.txt", content="hello"),
                   tool("SendMessage", to="team-lead", message="WROTE-IT"), say("Done.")]},
        {"name": "alice-start", "match": {"system": me, "last_prompt": "START-alice"},
         "turns": [tool("Write", file_path="out.txt", content="too early"),
                   tool("ExitPlanMode", plan="PLAN-V1: write out.txt"), say("Waiting for approval.")]},
        {"name": "alice-other", "match": {"system": me}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_plan_mode_teammate_waits_for_approval(cli: Cli, config_root: Path, layout: Layout, work: Path) -> None:
    with MockServer(plan_scenario()) as server:
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=work,
                   env=lead_env(config_root, server), timeout=90)  # fmt: skip
        alice = [r["body"] for r in server.requests if str(r.get("route", "")).startswith("alice")]
    assert proc.returncode == 0, proc.stderr
    assert "LEAD-DONE" in proc.stdout
    assert (work / "out.txt").read_text() == "hello", "the write before approval must have been refused"
    seen = json.dumps(alice[-1]["messages"])
    assert "plan mode is read-only" in seen
    assert "[Plan Rejected]" in seen and "Add a test step" in seen
    assert "[Plan Approved]" in seen
    assert_nothing_left(layout, config_root)


def permission_scenario() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("Task", name="alice", team_name=TEAM, description="writer", prompt="You are alice. START-alice"),
        say("Started."),
        {**tool("SendMessage", to="alice", message={"type": "shutdown_request"}), "wait_for": "PERM-DONE"},
        waiting("Waiting."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("LEAD-DONE"),
    ]
    me = "Your name is alice"
    return {"routes": [
        {"name": "alice-shutdown", "match": {"system": me, "last_prompt": "shutdown_request"},
         "turns": [tool("SendMessage", to="team-lead", message={"type": "shutdown_response",
                                                                  "request_id": REQUEST_ID, "approve": True})]},
        {"name": "alice-start", "match": {"system": me, "last_prompt": "START-alice"},
         "turns": [tool("Write", file_path="allowed.txt", content="ok"),
                   tool("Bash", command="touch refused.txt"),
                   tool("SendMessage", to="team-lead", message="PERM-DONE"), say("Done.")]},
        {"name": "alice-other", "match": {"system": me}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_teammate_permission_requests_are_answered_by_the_lead_policy(
    cli: Cli, config_root: Path, layout: Layout, work: Path
) -> None:
    """A default-mode teammate asks the lead; a headless lead answers with its own rules (Write yes, Bash no)."""
    with MockServer(permission_scenario()) as server:
        proc = cli("-p", "go", "--allowedTools", "Write", "--teammate-mode", "in-process", cwd=work,
                   env=lead_env(config_root, server), timeout=90)  # fmt: skip
        alice = [r["body"] for r in server.requests if str(r.get("route", "")).startswith("alice")]
    assert proc.returncode == 0, proc.stderr
    assert (work / "allowed.txt").read_text() == "ok"
    assert not (work / "refused.txt").exists()
    assert "The user denied permission to use Bash" in json.dumps(alice[-1]["messages"])
    assert_nothing_left(layout, config_root)
