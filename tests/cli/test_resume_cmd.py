"""`agentteams resume TEAM [AGENT]` refuses with one line what it cannot do: an unknown team, a team whose lead
still runs, options for a teammate resumed alone, a lead session without a transcript, a member that is no teammate."""

from __future__ import annotations

import os
from pathlib import Path

from agentteams.store.opener import open_store
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.presence import Presence
from tests.support.cli import Cli
from tests.support.cli_result import error

TEAM = "crew"


def test_resume_says_in_one_line_what_it_cannot_do(cli: Cli, layout: Layout, tmp_path: Path) -> None:
    assert "nosuch" in error(cli, "resume", "nosuch")
    store = open_store(layout)
    store.teams.create(TEAM, lead_session_id="1c1f4a4e-0a3b-4e5e-9d7e-0c6d1b2a3f40", cwd=str(tmp_path))
    assert "has no transcript" in error(cli, "resume", TEAM, "-p", "go on")
    assert "no options" in error(cli, "resume", TEAM, "carol", "-p", "go on")
    assert "team comes first" in error(cli, "resume", "-p", TEAM)
    assert "not a teammate of team crew that can be resumed" in error(cli, "resume", TEAM, "carol")
    assert "not a teammate" in error(cli, "resume", TEAM, LEAD_NAME)
    store.presence.write(TEAM, LEAD_NAME, Presence(pid=os.getpid(), session_id="s", backend="tmux"))
    assert "lead is still running: there is nothing to resume" in error(cli, "resume", TEAM)
    assert "ask it to bring carol back" in error(cli, "resume", TEAM, "carol")
