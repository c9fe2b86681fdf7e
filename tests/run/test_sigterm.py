"""SIGTERM ends a `-p` or SDK session as claude's ends (the Agent SDK's close sends it to a CLI still running 5 s
after stdin's end): gracefully, its cleanup run (here: its record among other sessions taken away), status 143."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import KEY
from tests.support.stream_json import STREAM_ARGS, sdk_user_line
from tests.support.wait import wait_until

pytestmark = pytest.mark.proc


def _busy_record(config_root: Path) -> dict[str, Any] | None:
    for path in (config_root / "sessions").glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("status") == "busy":
            return data  # type: ignore[no-any-return]
    return None


@pytest.mark.parametrize("how", ["print", "sdk"])
def test_sigterm_mid_turn_ends_the_session_gracefully(
    cli: Cli, work: Path, config_root: Path, tmp_path: Path, how: str
) -> None:  # fmt: skip
    gate = tmp_path / "never"
    wait = {"content": [{"type": "tool_use", "name": "Bash", "input": {
        "command": f"until [ -f {gate} ]; do sleep 0.1; done", "description": "wait"}}]}  # fmt: skip
    script = {"routes": [{"name": "main", "match": {"tools": True}, "turns": [wait, "done"], "idle": "idle."}]}
    with MockServer(script) as server:
        env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url, "AGENTTEAMS_NO_WARM": "1"}
        args = ["-p", "WORK"] if how == "print" else list(STREAM_ARGS)
        proc = cli.popen(*args, "--dangerously-skip-permissions", env=env, cwd=work, stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        try:
            assert proc.stdin is not None
            if how == "sdk":
                proc.stdin.write(sdk_user_line("WORK"))
                proc.stdin.flush()
            wait_until(lambda: _busy_record(config_root) is not None, 30, "the session busy in its Bash call")
            proc.send_signal(signal.SIGTERM)
            _out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 143, err
        assert "did not end within" not in err, err  # the graceful end's deadline (procs/term_signal.py)
        assert not list((config_root / "sessions").glob("*.json")), f"its record outlived it\n{err}"


HANGING_END = """
import sys, threading, time
from agentteams.procs import term_signal
term_signal.GRACE = 0.5
term_signal.leave_on_sigterm()
print("ready", flush=True)
try:
    time.sleep(60)
finally:
    threading.Event().wait()  # a graceful end that never ends
"""


def test_a_graceful_end_that_hangs_is_cut_short_at_its_deadline_and_says_where() -> None:
    proc = subprocess.Popen([sys.executable, "-c", HANGING_END], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143
    assert "did not end within 0.5s of SIGTERM" in err and "Thread" in err, err
