"""The pane's lean launcher (`python -S procs/pane_launcher.py agentteams ...`): the console-script launcher's contract,
held by the same tests run through it; the same request bytes; a lead's panes start it while its fork server runs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentteams.procs import launcher as launch
from agentteams.procs import pane_launcher as panelaunch
from agentteams.procs.fork.client import ForkServer
from agentteams.store.opener import open_store
from agentteams.store.paths import Layout
from agentteams.team.spawn.base import SpawnRequest, teammate_argv
from agentteams.team.spawn.spawners import TmuxSpawner
from tests.support.cli import AGENTTEAMS, Cli

# the launcher's contract (as in test_forkserver), run here once more with the pane launcher as `cli`
from tests.support.launcher_contract import (  # noqa: F401 (collected here: a test module runs what it holds)
    test_a_launchers_own_key_wins,
    test_child_killed_makes_the_launcher_exit_nonzero,
    test_child_runs_warm_on_the_launchers_stdio,
    test_env_is_the_launchers_and_the_key_comes_only_from_the_server,
    test_exit_codes_propagate,
    test_launcher_gone_takes_the_child_along,
    test_launcher_stops_waiting_when_the_starting_server_dies,
    test_launcher_waits_for_a_starting_server,
    test_no_zombies_remain,
    test_real_cli_through_the_server_matches_a_cold_start,
    test_sigint_reaches_the_child_as_keyboard_interrupt,
    test_unreachable_server_falls_back_to_a_cold_start,
)
from tests.support.procs import child_env


class PaneCli(Cli):
    """`agentteams ARGS` as a lead's tmux pane runs it while its fork server is up."""

    def argv(self, *args: str) -> list[str]:
        return [*ForkServer.launcher_argv(), AGENTTEAMS, *args]


@pytest.fixture
def cli(config_root: Path) -> Iterator[Cli]:
    runner = PaneCli(lambda: {**child_env(config_root), "PYTHONIOENCODING": "utf-8"})
    yield runner
    runner.end()


def test_the_launcher_argv_runs_without_site_and_names_an_existing_script() -> None:
    argv = ForkServer.launcher_argv()
    assert argv[:2] == [sys.executable, "-S"]
    assert Path(argv[2]).is_file() and Path(argv[2]).name == "pane_launcher.py"


def test_it_imports_neither_site_nor_the_package() -> None:
    """What keeps it fast: no `site`, nothing of agentteams, no `socket`/`json`/`signal` (enum, re, selectors)."""
    env = {k: v for k, v in os.environ.items() if k != launch.ENV_VAR}
    run = subprocess.run([*ForkServer.launcher_argv()[:2], "-X", "importtime", *ForkServer.launcher_argv()[2:], "true"],
                         env=env, capture_output=True, text=True, check=True)  # fmt: skip
    loaded = {line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert "_socket" in loaded  # the probe sees imports at all
    assert not loaded & {"site", "socket", "json", "signal", "enum", "re", "selectors", "agentteams"}, loaded


@pytest.mark.parametrize("value", ["plain", 'üñí "quoted" \\ back\tslash\n', "\udcff surrogate-escaped byte"])
def test_its_request_is_byte_for_byte_the_console_launchers(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """The fork server reads one format (`launch.read_request`): both launchers must write exactly it."""
    monkeypatch.setenv("PANELAUNCH_TEST", value)
    argv = [AGENTTEAMS, "--agent-id", "x@t", "--prompt", value]
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, theirs:
        launch.Relay(ours)._send(argv)
        ours.shutdown(socket.SHUT_WR)
        sent, fds, _, _ = socket.recv_fds(theirs, 1 << 20, 3)
        for fd in fds:
            os.close(fd)
        while chunk := theirs.recv(1 << 20):
            sent += chunk
    assert panelaunch._request(argv) == sent


def test_a_pane_starts_the_launcher_only_while_a_fork_server_runs(
    layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lead's TmuxSpawner: the lean launcher before our command while the server's env is given; without
    it, the command alone (as before: a cold start)."""
    served: dict[str, str] = {launch.ENV_VAR: str(tmp_path / "fs-1.sock")}
    spawner = TmuxSpawner(
        open_store(layout), socket_path=str(tmp_path / "no-tmux.sock"), extra_env=lambda: dict(served),
        launcher=ForkServer.launcher_argv(),
    )  # fmt: skip
    started: list[list[str]] = []

    def record(target: Any, name: str, color: str, argv: list[str], *rest: Any, **kw: Any) -> tuple[str, int | None]:
        started.append(argv)
        return "%9", None

    monkeypatch.setattr(spawner.tmux, "spawn_pane_process", record)
    req = SpawnRequest(name="x", team="t", color="blue", cwd=tmp_path, parent_session_id="S", model="m")
    spawner.spawn(req)
    served.clear()  # the server has exited
    spawner.spawn(req)
    plain = teammate_argv(req, spawner.command)
    assert started == [[*ForkServer.launcher_argv(), *plain], plain]
