"""A team exported from a lead that bypassed permissions (issue 32, item 6): its roles say mode bypassPermissions, and
a teammate may bypass them only while its lead does. Launched without the flag, it used to fail at its first role with
no way on; now the person is asked once (yes: the lead and the team bypass them), and headless it is one line naming
the flag, before anything starts. Real processes: the lead in a tmux pane, the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.team_run import lead_env
from tests.support.team_script import say
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

TEAM_FILE = """\
[team]
name = "bypassed"

[lead]
instructions = "Let the builder work. LEAD-INSTRUCTIONS"

[[role]]
name = "builder"
prompt = "Build it."
mode = "bypassPermissions"
"""
SCRIPT = {"routes": [
    {"name": "builder", "match": {"system": "Your name is builder"}, "turns": [], "idle": "Noted."},
    {"name": "lead", "match": {"tools": True}, "turns": [say("LEAD-READY")], "idle": "Noted."},
]}  # fmt: skip


def team_file(tmp_path: Path) -> Path:
    path = tmp_path / "team.toml"
    path.write_text(TEAM_FILE, encoding="utf-8")
    return path


def test_headless_it_is_one_line_naming_the_flag_and_nothing_starts(
    cli: Cli, config_root: Path, tmp_path: Path
) -> None:
    path = team_file(tmp_path)
    with MockServer(SCRIPT) as server:
        proc = cli("launch", str(path), "go", "-p", "--teammate-mode", "in-process", cwd=tmp_path,
                   env=lead_env(config_root, server))  # fmt: skip
        assert server.requests == []
    assert proc.returncode == 1
    [line] = proc.stderr.splitlines()
    assert line.startswith("agentteams: error: ") and "'builder'" in line and "--dangerously-skip-permissions" in line
    assert not (config_root / "teams" / "bypassed").exists()


def test_headless_with_the_flag_it_launches(cli: Cli, config_root: Path, tmp_path: Path) -> None:
    with MockServer(SCRIPT) as server:
        proc = cli("launch", str(team_file(tmp_path)), "go", "-p", "--dangerously-skip-permissions", "--teammate-mode",
                   "in-process", cwd=tmp_path, env=lead_env(config_root, server), timeout=90)  # fmt: skip
        routes = [r.get("route") for r in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert "lead" in routes and "builder" in routes, routes


def test_interactive_one_confirmation_launches_the_team_bypassing(
    cli: Cli, config_root: Path, tmp_path: Path, tmux: Tmux
) -> None:
    path = team_file(tmp_path)
    with MockServer(SCRIPT) as server:
        pane = tmux.start(lead_env(config_root, server), tmp_path)
        tmux.respawn(pane, cli.line("launch", str(path), "--teammate-mode", "in-process"))
        wait_until(lambda: "1. Yes, launch with permissions bypassed" in tmux.capture(pane, scrollback=True), 60,
                   "the question")  # fmt: skip
        assert not (config_root / "teams" / "bypassed").exists(), "nothing starts before the answer"
        tmux.send(pane, "1", "Enter")
        wait_until(lambda: "LEAD-READY" in tmux.capture(pane, scrollback=True), 60, "the lead's first answer",
                   explain=lambda: tmux.capture(pane, scrollback=True))  # fmt: skip
        config = json.loads((config_root / "teams" / "bypassed" / "config.json").read_text())
        first = json.dumps(next(r["body"] for r in server.requests if r["route"] == "lead")["messages"][0])
    builder = next(m for m in config["members"] if m["name"] == "builder")
    assert builder["mode"] == "bypassPermissions"
    assert "LEAD-INSTRUCTIONS" in first
