"""Shared fixtures: every test gets its own config root and runs outside tmux; real processes (tmux, the CLI,
workers, the real Claude Code CLI) are started through fixtures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.store.paths import Layout
from tests.support import realclaude
from tests.support.cli import Cli
from tests.support.live_team import LiveTeam, running_team
from tests.support.procs import child_env
from tests.support.tmuxlab import Tmux
from tests.support.workers import Gate, Pool


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


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    """A tmux server of this test's own (not started yet); afterwards it is killed with every process it ran."""
    server = Tmux(tmp_path / "tmux.sock")
    yield server
    server.stop()


@pytest.fixture
def cli(config_root: Path) -> Iterator[Cli]:
    """`agentteams` as a real process on this test's config root, outside tmux."""
    runner = Cli(lambda: {**child_env(config_root), "PYTHONIOENCODING": "utf-8"})
    yield runner
    runner.end()


@pytest.fixture
def pool(tmp_path: Path, config_root: Path) -> Iterator[Pool]:
    """Worker processes (tests/support/workers.py) on this test's config root; killed afterwards."""
    p = Pool(tmp_path / "work", child_env(config_root))
    try:
        yield p
    finally:
        p.kill_all()


@pytest.fixture
def gate(tmp_path: Path, config_root: Path) -> Iterator[Gate]:
    """Worker processes released all at once; killed afterwards."""
    g = Gate(tmp_path / "work", child_env(config_root))
    try:
        yield g
    finally:
        g.kill_all()


@pytest.fixture
def claude() -> Path:
    """The real Claude Code CLI (the pinned version, installed on first use): never skipped."""
    return realclaude.claude_bin()


@pytest.fixture
def live_team(tmux: Tmux, cli: Cli, config_root: Path, tmp_path: Path) -> Iterator[LiveTeam]:
    """A lead and alice in `tmux`, alice held mid-turn on task #1 (tests/support/live_team.py)."""
    with running_team(tmux, cli, config_root, tmp_path) as team:
        yield team
