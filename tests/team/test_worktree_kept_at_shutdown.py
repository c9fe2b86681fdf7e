"""A dirty worktree kept when the lead takes its team down itself (issue 32, item 6): a -p lead whose model ends its
turn with a teammate still at work shuts the team down, and the teammate's worktree, holding uncommitted work, is kept
and said (one warning line naming it and its files). It used to go unsaid: the departure's notice is muted while the
team goes down, and the worktrees of the team were never looked at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.git_repo import make_repo
from tests.support.team_run import lead_env
from tests.support.team_script import REQUEST_ID, TEAM, say, tool


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def scenario() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("Task", name="bob", team_name=TEAM, description="b", prompt="START-bob", isolation="worktree"),
        {**say("Bob has started on it. LEAD-DONE"), "wait_for": "WIP-WRITTEN"},
    ]
    approve = {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True}
    bob = [tool("Bash", command="echo wip > wip.txt"), tool("SendMessage", to="team-lead", message="WIP-WRITTEN",
           summary="wip"), say("Left some work uncommitted.")]  # fmt: skip
    return {"routes": [
        {"name": "bob-shutdown", "match": {"system": "Your name is bob", "last_prompt": "shutdown_request"},
         "turns": [tool("SendMessage", to="team-lead", message=approve)] * 2},
        {"name": "bob", "match": {"system": "Your name is bob"}, "turns": bob, "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_a_dirty_worktree_kept_as_the_lead_takes_its_team_down_is_said(
    cli: Cli,
    config_root: Path,
    repo: Path,
) -> None:
    with MockServer(scenario()) as server:
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=repo,
                   env=lead_env(config_root, server), timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    tree = repo / ".claude" / "worktrees" / TEAM / "bob"
    assert (tree / "wip.txt").exists(), "the uncommitted work is kept"
    said = [line for line in proc.stderr.splitlines() if "kept bob's worktree" in line]
    assert len(said) == 1 and str(tree) in said[0] and "wip.txt" in said[0], proc.stderr
    assert said[0].startswith("agentteams: warning: ")
