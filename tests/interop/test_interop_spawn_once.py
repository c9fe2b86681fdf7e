"""Idempotent spawns with a real `claude` teammate (issue 15, item 4): our lead spawns alice twice in a row; the
second call returns the live alice (her pane answers for her: a real CLI writes no presence record) and starts
nothing, and the team then runs and shuts down as with one spawn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.interop_team import TEAM, our_lead_scenario, routed, watch
from tests.support.tmuxlab import Tmux

pytestmark = pytest.mark.timeout(90)


def twice_scenario() -> dict[str, Any]:
    script = our_lead_scenario()
    lead = next(r for r in script["routes"] if r["name"] == "lead")["turns"]
    lead.insert(2, lead[1])  # the same Task call again, at once
    return script


def test_a_second_spawn_of_a_live_real_claude_returns_it(
    claude: Path, claude_version: str, cli: Cli, tmux: Tmux, layout: Layout, config_root: Path, proj: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    with MockServer(twice_scenario()) as server:
        rc.seed_home(config_root, [proj], claude_version)
        lead_pane = tmux.start(rc.claude_env(config_root, server.base_url), proj, options={"remain-on-exit": "on"})
        rcfile, out, err = tmp_path / "rc.txt", tmp_path / "out.txt", tmp_path / "err.txt"
        lead = cli.line("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "tmux",
                        "--teammate-command", str(claude))  # fmt: skip
        tmux.respawn(lead_pane, f"{lead} > {out} 2> {err}; echo $? > {rcfile}")

        def explain() -> str:
            lead_err = err.read_text() if err.exists() else ""
            return f"routes: {[(r.get('route'), r.get('turn')) for r in server.arrivals]}\n{lead_err}\n{tmux.panes()}"

        def told() -> bool:
            return any("already a live member" in json.dumps(r.get("body")) for r in routed(server, "lead"))

        watch(told, 40, "the lead's model to hear alice is already a member", explain)
        members = json.loads((layout.teams_dir / TEAM / "config.json").read_text())["members"]
        assert [m["name"] for m in members] == ["team-lead", "alice"], explain()
        assert len(tmux.panes()) == 2, f"one pane for the lead, one for alice: {explain()}"
        watch(lambda: rcfile.exists() and rcfile.read_text().strip() != "", 60, "our lead to exit", explain)
        assert rcfile.read_text().strip() == "0", explain()
        assert "OUR-LEAD-DONE" in out.read_text(), explain()
    assert not any("alice-2" in json.dumps(r.get("body")) for r in routed(server, "lead")), "a second alice was made"
