"""Every test gets its own config root and runs outside tmux."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.store.paths import Layout


@pytest.fixture(autouse=True)
def config_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "claude"
    root.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("TMUX_PANE", raising=False)
    monkeypatch.delenv("AGENTTEAMS_TMUX_SOCKET", raising=False)
    yield root


@pytest.fixture
def layout(config_root: Path) -> Layout:
    return Layout(config_root)


def child_env(config_root: Path) -> dict[str, str]:
    """Environment for a child process: same config root, outside tmux."""
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    env["CLAUDE_CONFIG_DIR"] = str(config_root)
    return env


def run_agentteams(config_root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI as a real process; it must never print a traceback."""
    env = child_env(config_root)
    env["PYTHONIOENCODING"] = "utf-8"
    proc = subprocess.run(
        [sys.executable, "-m", "agentteams", *args],
        env=env, capture_output=True, text=True, encoding="utf-8", timeout=timeout, check=False,
    )  # fmt: skip
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def make_team(layout: Layout, team: str, *members: str) -> None:
    """A team with these teammates, through the real stores."""
    from agentteams.store.teams import NewMember, TeamStore

    teams = TeamStore(layout)
    teams.create(team)
    for name in members:
        teams.add_member(team, NewMember(name=name))
