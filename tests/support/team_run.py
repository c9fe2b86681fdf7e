"""A team run end to end: the lead (`agentteams -p`) in a tmux pane or as a process against the scripted server,
what it gave, the checks that the teams issue's scenario did its work and that nothing of the team is left, and the
scenario of a teammate killed mid-turn."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence
from tests.support.cli import Cli
from tests.support.procs import child_env, processes_with_env
from tests.support.team_script import TEAM, say, tool, waiting
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
    # a teammate whose pane the lead closed as it left ends within moments of the lead, not always before it
    wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=exclude) == [], 15,
               "every agent process of the run to be gone")  # fmt: skip
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
        # held 3 s (the tests give the lead 2 s to notice): TeamDelete removes the task files, so an answer at once
        # could take the team away before a loaded test had looked at the dead teammate's task set back to pending
        {**tool("TeamDelete"), "wait_for": "Teammate alice stopped unexpectedly", "delay_ms": 3000},
        say("alice died; team removed. LEAD-DONE"),
    ]
    return {"routes": [
        {"name": "alice-claim", "match": {"system": "Your name is alice", "last_prompt": "You claimed task #"},
         "turns": [{**say("never sent"), "delay_ms": 6000}]},
        {"name": "alice-other", "match": {"system": "Your name is alice"}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip
