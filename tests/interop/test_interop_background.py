"""Interop tier, background sessions: a session started with `agentteams --bg` and one started with the real
`claude --bg` share the job records (`jobs/<id>/state.json`), so each CLI lists the other's; what only the other CLI
can do with its own (attach, logs, stop) ours says in one line."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.procs import processes_with_env
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = [pytest.mark.timeout(240), pytest.mark.tmux]
BACKGROUNDED = re.compile(r"backgrounded · ([0-9a-f]{8})")


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A short private runtime dir for our sessions' sockets; the sessions left in it stopped afterwards."""
    path = Path(tempfile.mkdtemp(prefix="bg", dir="/tmp"))
    yield path
    for sock in (path / "agentteams").glob("bg-*.sock"):
        Tmux(sock).stop()
    shutil.rmtree(path, ignore_errors=True)


def _kill_claude_daemon(config: Path) -> None:
    """claude's supervisor and its pty hosts outlive `claude --bg`: every process of this config dir goes."""
    for pid in processes_with_env("CLAUDE_CONFIG_DIR", str(config)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _rows(proc: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    """The background sessions listed, by id (claude lists live interactive sessions too: they have no job id)."""
    assert proc.returncode == 0, proc.stderr
    return {r["id"]: r for r in json.loads(proc.stdout) if "id" in r}


@ccv.only(rc.NEWEST)  # --bg and `agents` are 2.1.332's
def test_each_cli_lists_the_others_background_sessions(
    claude: Path, claude_version: str, cli: Cli, config_root: Path, tmp_path: Path, runtime: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with MockServer({"fallback": "done"}) as server:
        env = rc.claude_env(config_root, server.base_url, extra={"XDG_RUNTIME_DIR": str(runtime),
                                                                 "CLAUDE_CODE_SANDBOXED": "1"})  # fmt: skip
        try:
            theirs_run = subprocess.run([str(claude), "--bg", "their task"], env=env, cwd=work, capture_output=True,
                                        text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)  # fmt: skip
            found = BACKGROUNDED.search(theirs_run.stdout)
            assert theirs_run.returncode == 0 and found is not None, theirs_run.stdout + theirs_run.stderr
            theirs = found.group(1)
            ours_run = cli("--bg", "our task", "-n", "ours", env=env, cwd=work)
            found = BACKGROUNDED.search(ours_run.stdout)
            assert ours_run.returncode == 0 and found is not None, ours_run.stderr
            ours = found.group(1)

            listed = _rows(cli("agents", "--json", "--all", env=env))
            assert listed[theirs]["kind"] == "background" and listed[theirs]["name"] == "their task", listed
            assert listed[theirs]["sessionId"].startswith(theirs) and listed[theirs]["cwd"] == str(work)
            assert listed[ours]["name"] == "ours"

            def claude_lists_ours() -> bool:
                proc = subprocess.run([str(claude), "agents", "--json", "--all"], env=env, cwd=work,
                                      capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
                rows = _rows(proc)
                return ours in rows and rows[ours]["name"] == "ours" and rows[ours]["cwd"] == str(work)

            wait_until(claude_lists_ours, 60, "the real claude to list our background session")
            for verb in ("attach", "logs", "stop"):
                said = cli(verb, theirs, env=env)
                assert said.returncode == 1 and f"claude {verb} {theirs}" in said.stderr, (verb, said.stderr)
            assert cli("stop", ours, env=env).returncode == 0
            stopped = subprocess.run([str(claude), "agents", "--json", "--all"], env=env, cwd=work,
                                     capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
            assert _rows(stopped)[ours]["state"] == "stopped"
        finally:
            _kill_claude_daemon(config_root)
