"""Teams end to end: real processes, a private tmux server, the real SDK against our scripted server.

The lead is `agentteams -p` (it shuts its team down before answering); teammates run in tmux panes or as threads.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence, read_presence
from tests.support.cli import Cli
from tests.support.procs import child_env, pid_alive, processes_with_env
from tests.support.team_script import REQUEST_ID, TEAM, say, team_scenario, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

KEY = "test-key-team-0123456789abcdef"


@dataclass
class Run:
    rc: int
    out: str
    err: str
    server: MockServer

    def routes(self) -> list[str | None]:
        return [r.get("route") for r in self.server.requests]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


def lead_env(config_root: Path, server: MockServer) -> dict[str, str]:
    env = child_env(config_root)
    env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.base_url, CLAUDE_CODE_MAX_RETRIES="1")
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    return env


def lead_in_tmux(tmux: Tmux, cli: Cli, env: dict[str, str], work: Path, tmp: Path, *args: str) -> tuple[str, Path]:
    """Start `agentteams -p go ...` in the lead pane of a private tmux server; returns the pane and rc file."""
    pane = tmux.start(env, work, options={"remain-on-exit": "on"})
    rc = tmp / "rc.txt"
    line = f"{cli.line('-p', 'go', '--dangerously-skip-permissions', *args)} > {tmp}/out.txt 2> {tmp}/err.txt"
    tmux.respawn(pane, f"{line}; echo $? > {rc}")
    return pane, rc


def finish(rc: Path, tmp: Path, server: MockServer, timeout: float = 60) -> Run:
    # the shell creates the rc file, then writes the lead's exit status into it
    wait_until(lambda: rc.exists() and rc.read_text().strip() != "", timeout, "the lead to exit")
    return Run(int(rc.read_text().strip()), (tmp / "out.txt").read_text(), (tmp / "err.txt").read_text(), server)


def assert_nothing_left(layout: Layout, config_root: Path, tmux: Tmux | None = None) -> None:
    assert not (layout.teams_dir / TEAM).exists(), "the team dir is left behind"
    assert not layout.task_dir(TEAM).exists(), "the task dir is left behind"
    exclude = frozenset({tmux.server_pid()}) if tmux else frozenset()
    assert processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=exclude) == []
    if tmux is not None:
        panes = tmux.panes()
        assert len(panes) == 1, f"teammate panes are left behind: {panes}"


def check_team_run(run: Run, work: Path) -> None:
    assert run.rc == 0, run.err
    assert "LEAD-DONE" in run.out
    log = (work / "work.log").read_text().split()  # lines like task-2-by-bob, in the order work was done
    assert len(log) == 3, log
    assert {line.split("-")[1] for line in log[:2]} == {"1", "2"}, f"task 3 must come after 1 and 2: {log}"
    assert log[2].startswith("task-3-by-"), log
    lead_requests = [r for r in run.server.requests if r.get("route") == "lead"]
    seen = json.dumps([r.get("body") for r in lead_requests])
    assert "completedTaskId" in seen, "idle notices with the completed task never reached the lead's model"
    assert "[to alice]" in seen or "[to bob]" in seen, "no idle notice carried the peer-DM summary"
    for name in ("alice", "bob"):
        assert f"{name}-shutdown" in run.routes(), f"{name} never answered the shutdown request"


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


def in_her_pane(presence: Presence | None) -> bool:
    """Working, and from her pane. A teammate started before its pane can be at work before the pane's launcher
    attaches; one killed then is started again by that launcher through the fork server (session 10's note), so a
    test of a teammate's death kills one that runs in its pane."""
    return presence is not None and presence.state == "working" and bool(presence.pane_id)


def kill_scenario() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("TaskCreate", subject="Long job", description="takes a while"),
        tool("Task", name="alice", team_name=TEAM, description="worker", prompt="You are alice. START-alice"),
        waiting("Started."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice stopped unexpectedly"},
        say("alice died; team removed. LEAD-DONE"),
    ]
    return {"routes": [
        {"name": "alice-claim", "match": {"system": "Your name is alice", "last_prompt": "You claimed task #"},
         "turns": [{**say("never sent"), "delay_ms": 6000}]},
        {"name": "alice-other", "match": {"system": "Your name is alice"}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


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
