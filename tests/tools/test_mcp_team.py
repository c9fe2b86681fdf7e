"""MCP servers in a team: the lead's `--mcp-config` reaches its teammate (in-process, and a tmux pane's process,
which gets it on its command line as Claude Code's lead passes it); each opens its own connection (its own server
process) and calls the server's tool; nothing is left running after the team is gone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from tests.support.cli import Cli
from tests.support.mcp_lab import config, stdio_entry, wait_ready_command
from tests.support.procs import processes_with_env
from tests.support.team_run import finish, lead_env, lead_in_tmux
from tests.support.team_script import TEAM, say, shutdown_route, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

ME = "Your name is alice"


def scenario(ready: Path) -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("Bash", command=wait_ready_command(ready, 1)),
        tool("mcp__srv__echo", text="from-lead"),
        tool("Task", name="alice", team_name=TEAM, description="helper", prompt="You are alice. START-alice"),
        say("Started."),
        {**tool("SendMessage", to="alice", message={"type": "shutdown_request"}), "wait_for": "ALICE-DONE"},
        waiting("Waiting."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("LEAD-DONE"),
    ]
    alice = [
        tool("Bash", command=wait_ready_command(ready, 2)),  # the lead's server and its own
        tool("mcp__srv__echo", text="from-alice"),
        tool("SendMessage", to="team-lead", message="ALICE-DONE", summary="done"),
        say("Done."),
    ]
    return {"routes": [
        shutdown_route("alice"),
        {"name": "alice-start", "match": {"system": ME, "last_prompt": "START-alice"}, "turns": alice},
        {"name": "alice-other", "match": {"system": ME}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def echo_pid(server: MockServer, route: str, text: str) -> int:
    """The server pid the echo tool answered `route`'s call with (each agent's own server process)."""
    seen = json.dumps([r.get("body") for r in server.requests if str(r.get("route", "")).startswith(route)])
    found = re.search(rf"echo: {text} \(pid (\d+)\)", seen)
    assert found, f"{route} got no answer from the MCP tool"
    return int(found.group(1))


def check(server: MockServer, config_root: Path, layout: Layout, exclude: frozenset[int] = frozenset()) -> None:
    lead_pid, alice_pid = echo_pid(server, "lead", "from-lead"), echo_pid(server, "alice", "from-alice")
    assert lead_pid != alice_pid  # each its own connection: its own server process
    assert not (layout.teams_dir / TEAM).exists()
    wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=exclude) == [], 15,
               "every MCP server process to end with its agent")  # fmt: skip


@pytest.fixture
def ready(tmp_path: Path) -> Path:
    d = tmp_path / "ready"
    d.mkdir()
    return d


def test_an_in_process_teammate_calls_the_leads_mcp_server(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, ready: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with MockServer(scenario(ready)) as server:
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process",
                   "--mcp-config", config("srv", stdio_entry(ready)), cwd=work, env=lead_env(config_root, server),
                   timeout=120)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert "LEAD-DONE" in proc.stdout
        check(server, config_root, layout)


def test_a_tmux_teammate_gets_the_mcp_config_and_calls_the_tool(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, ready: Path, tmux: Tmux
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "servers.json").write_text(config("srv", stdio_entry(ready)))  # a file: passed on as given
    with MockServer(scenario(ready)) as server:
        env = lead_env(config_root, server)
        _pane, rc = lead_in_tmux(tmux, cli, env, work, tmp_path, "--teammate-mode", "tmux", "--mcp-config",
                                 "servers.json")  # fmt: skip
        run = finish(rc, tmp_path, server, timeout=120)
        assert run.rc == 0, run.err
        assert "LEAD-DONE" in run.out
        check(server, config_root, layout, exclude=frozenset({tmux.server_pid()}))
