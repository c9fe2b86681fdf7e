"""The new tools in a teammate of a real team (lead `agentteams -p` in tmux, alice in a pane of her own): her
TodoWrite is drawn in her pane, her background command runs while she works, and it is gone once she has shut
down."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from tests.support.cli import Cli
from tests.support.pgroups import find_process
from tests.support.team_run import assert_nothing_left, finish, lead_env, lead_in_tmux
from tests.support.team_script import TEAM, say, shutdown_route, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

TODOS = [
    {"content": "Write the parser", "status": "in_progress", "activeForm": "Writing the parser"},
    {"content": "Test it", "status": "pending", "activeForm": "Testing it"},
]


def scenario(marker: str) -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM, description="tools test"),
        tool("Task", name="alice", team_name=TEAM, description="worker", prompt="You are alice. START-alice"),
        say("Started."),
        {**tool("SendMessage", to="alice", message={"type": "shutdown_request", "reason": "done"}),
         "wait_for": "ALICE-READY"},
        waiting("Waiting."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("LEAD-DONE"),
    ]  # fmt: skip
    alice = [
        tool("TodoWrite", todos=TODOS),
        tool("Bash", command=f"bash -c 'exec -a {marker} sleep 300'", run_in_background=True),
        tool("SendMessage", to="team-lead", message="ALICE-READY", summary="ready"),
        {**say("ALICE-WORKING"), "delay_ms": 6000},  # the test looks at her pane meanwhile
    ]
    return {"routes": [
        shutdown_route("alice"),
        {"name": "alice", "match": {"system": "Your name is alice", "first_user": "START-alice"}, "turns": alice,
         "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_a_teammate_draws_its_todos_and_its_background_command_ends_with_it(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, tmux: Tmux
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    marker = f"bgmate-{uuid.uuid4().hex[:8]}"
    with MockServer(scenario(marker)) as server:
        lead, rc = lead_in_tmux(tmux, cli, lead_env(config_root, server), work, tmp_path, "--teammate-mode", "tmux")

        def alice_pane() -> str | None:
            return next((p for p in tmux.panes() if p != lead), None)

        wait_until(lambda: alice_pane() is not None, 60, "alice's pane")
        pane = alice_pane()
        assert pane is not None
        wait_until(lambda: "◐ Writing the parser" in tmux.capture(pane), 30, "alice's todo list in her pane",
                   explain=lambda: tmux.capture(pane))  # fmt: skip
        assert "☐ Test it" in tmux.capture(pane)
        wait_until(lambda: find_process(marker) is not None, 30, "alice's background command")
        run = finish(rc, tmp_path, server, timeout=90)
    assert run.rc == 0 and "LEAD-DONE" in run.out, run.err
    wait_until(lambda: find_process(marker) is None, 10, "alice's background command to end with her")
    assert_nothing_left(layout, config_root, tmux)
