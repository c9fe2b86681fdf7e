"""`agentteams resume TEAM -p` after the lead's pane was closed with its team idle (issue 32, item 5): the resumed lead
restarts its idle teammate (a new key) and that teammate, with nothing to do, is idle again: the run ends. It used to
stay `isActive: true` for ever, so the -p lead never saw its team settle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.store.file.teams import TeamStore
from agentteams.store.paths import Layout
from agentteams.store.presence import read_presence
from tests.support.cli import Cli
from tests.support.procs import pid_alive, processes_with_env
from tests.support.team_run import finish, lead_env
from tests.support.team_script import REQUEST_ID, TEAM, say, tool
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

FLAGS = ("--dangerously-skip-permissions", "--teammate-mode", "tmux")


def scenario() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("Task", name="alice", team_name=TEAM, description="worker", prompt="You are alice. START-alice"),
        {**say("Thinking it over."), "delay_ms": 60000},  # the lead is mid-request when its pane is closed
        {**say("Nothing left to do."), "wait_for": "You were resumed"},
    ]
    approve = {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True}
    return {"routes": [
        {"name": "alice-shutdown", "match": {"system": "Your name is alice", "last_prompt": "shutdown_request"},
         "turns": [tool("SendMessage", to="team-lead", message=approve)] * 2},
        {"name": "alice-other", "match": {"system": "Your name is alice"}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def idle(layout: Layout, name: str) -> bool:
    presence = read_presence(layout, TEAM, name)
    member = TeamStore(layout).read(TEAM).member(name)
    return presence is not None and presence.state == "idle" and member is not None and member.is_active is False


def test_resume_p_after_the_lead_pane_closed_ends_with_the_relaunched_teammate_idle(
    cli: Cli, config_root: Path, layout: Layout, work: Path, tmp_path: Path, tmux: Tmux
) -> None:
    with MockServer(scenario()) as server:
        env = lead_env(config_root, server)
        first = tmux.start(env, work, options={"remain-on-exit": "on"})
        tmux.respawn(first, f"{cli.line('-p', 'go', *FLAGS)} > {tmp_path}/first.txt 2>&1")
        wait_until(lambda: len([r for r in server.arrivals if r.get("route") == "lead"]) >= 3, 60, "the held request")
        wait_until(lambda: idle(layout, "alice"), 30, "alice idle, nothing to do")
        lead = read_presence(layout, TEAM, "team-lead")
        old_alice = read_presence(layout, TEAM, "alice")
        assert lead is not None and old_alice is not None
        tmux.run("kill-pane", "-t", first)  # the person closes the lead's pane
        wait_until(lambda: not pid_alive(lead.pid), 10, "the lead to be gone with its pane")

        second = tmux.run("new-window", "-d", "-P", "-F", "#{pane_id}", "-c", str(work), "cat")
        line = cli.line("resume", TEAM, "-p", "carry on", *FLAGS)
        tmux.respawn(second, f"{line} > {tmp_path}/out.txt 2> {tmp_path}/err.txt; echo $? > {tmp_path}/rc.txt")
        try:
            run = finish(tmp_path / "rc.txt", tmp_path, server, timeout=60)
        except AssertionError as e:
            config = (layout.teams_dir / TEAM / "config.json").read_text()
            raise AssertionError(f"{e}\n{config}\n{(tmp_path / 'err.txt').read_text()}") from None
        server_only = frozenset({tmux.server_pid()})
        routes = [r.get("route") for r in server.requests]
        bodies = json.dumps([r["body"] for r in server.requests if r.get("route") == "alice-shutdown"])
        lead_bodies = [json.dumps(r["body"]) for r in server.requests if r.get("route") == "lead"]
    assert run.rc == 0, run.err
    assert any("You were resumed" in body for body in lead_bodies), "the resumed lead never asked its model"
    assert "alice-shutdown" in routes and "START-alice" in bodies  # the restarted alice, with her conversation
    assert not pid_alive(old_alice.pid)
    assert not (layout.teams_dir / TEAM).exists(), "the team is left behind"
    wait_until(lambda: processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=server_only) == [], 15,
               "every agent process of the run to be gone")  # fmt: skip
