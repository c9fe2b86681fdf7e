"""A running team for the `status`/`watch`/`attach`/`logs` tests: a lead in a private tmux server and one
teammate (alice) held mid-turn by a slow scripted model answer, plus helpers to run the CLI against it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.presence import read_presence
from tests.support.cli import Cli
from tests.support.procs import child_env, pid_alive, processes_with_env
from tests.support.team_script import TEAM, say, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

KEY = "test-key-live-0123456789abcdef"
ESC = "\x1b"


def held_scenario() -> dict[str, Any]:
    """alice claims task #1 and her model answer then takes a minute: she stays `working` until killed."""
    lead = [
        tool("TeamCreate", team_name=TEAM, description="status test"),
        tool("TaskCreate", subject="Long job", description="takes a while"),
        tool("TaskCreate", subject="Follow-up", description="after the long job"),
        tool("TaskUpdate", taskId="2", addBlockedBy=["1"]),
        tool("Task", name="alice", team_name=TEAM, description="worker", prompt="You are alice. START-alice"),
        waiting("Started."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice stopped unexpectedly"},
        say("alice died; team removed. LEAD-DONE"),
    ]
    return {"routes": [
        {"name": "alice-claim", "match": {"system": "Your name is alice", "last_prompt": "You claimed task #"},
         "turns": [{**say("never sent"), "delay_ms": 60000}]},
        {"name": "alice-other", "match": {"system": "Your name is alice"}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


@dataclass
class LiveTeam:
    tmux: Tmux
    layout: Layout
    cli: Cli  # runs the CLI "inside" the private tmux server
    lead_pane: str
    alice_pane: str
    lead_pid: int
    alice_pid: int
    rc: Path

    @property
    def env(self) -> dict[str, str]:
        return self.cli.env()

    def kill(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not pid_alive(pid), 10, f"process {pid} to die")


def status_json(cli: Cli, *args: str, env: dict[str, str] | None = None) -> Any:
    proc = cli("status", *args, "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def members(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in view["members"]}


def inside(tmux: Tmux, config_root: Path) -> dict[str, str]:
    """Environment of a command run in a pane of the private tmux server."""
    env = child_env(config_root)
    env["TMUX"] = f"{tmux.sock},{tmux.server_pid()},0"
    return env


@contextlib.contextmanager
def running_team(tmux: Tmux, cli: Cli, config_root: Path, tmp: Path) -> Iterator[LiveTeam]:
    """Start the team in `tmux` and wait until alice is mid-turn on task #1; afterwards kill every process it
    started (the `tmux` fixture then stops the server)."""
    layout = Layout(config_root)
    work = tmp / "work"
    work.mkdir()
    with MockServer(held_scenario()) as server:
        env = child_env(config_root)
        env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.base_url, CLAUDE_CODE_MAX_RETRIES="1")
        env.pop("ANTHROPIC_AUTH_TOKEN", None)
        lead_pane = tmux.start(env, work, options={"remain-on-exit": "on"})
        rc = tmp / "rc.txt"
        line = cli.line("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "tmux")
        tmux.respawn(lead_pane, f"{line} > {tmp}/out.txt 2> {tmp}/err.txt; echo $? > {rc}")
        try:
            # the scripted server logs a request only once answered: alice's own report says she is mid-turn
            wait_until(lambda: _working_on_1(layout), 60, "alice to start work on task #1, in her pane")
            lead = read_presence(layout, TEAM, "team-lead")
            alice = read_presence(layout, TEAM, "alice")
            assert lead is not None and alice is not None and alice.pane_id
            in_tmux = cli.with_env(inside(tmux, config_root), timeout=30)
            yield LiveTeam(tmux, layout, in_tmux, lead_pane, alice.pane_id, lead.pid, alice.pid, rc)
        finally:
            _stop(tmux, config_root)


def _working_on_1(layout: Layout) -> bool:
    """Alice says she works on #1, and from her pane: a teammate started before its pane (procs/fork/early.py) can be
    at work before the pane's launcher attaches and its id is written."""
    alice = read_presence(layout, TEAM, "alice")
    return alice is not None and (alice.state, alice.current_task) == ("working", "1") and bool(alice.pane_id)


def _stop(tmux: Tmux, config_root: Path) -> None:
    """Kill what is left of the team: its processes carry this test's config root (the tmux server too, spared)."""
    exclude: frozenset[int] = frozenset()
    with contextlib.suppress(AssertionError):  # no server left to spare
        exclude = frozenset({tmux.server_pid()})
    for pid in processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=exclude):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(AssertionError):
        wait_until(lambda: not processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=exclude), 10,
                   "the team's processes to end", interval=0.02)  # fmt: skip
