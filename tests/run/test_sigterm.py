"""SIGTERM ends a `-p` or SDK session as claude's ends (the Agent SDK's close sends it to a CLI still running 5 s
after stdin's end): gracefully, its cleanup run (here: its record among other sessions taken away), status 143."""

from __future__ import annotations

import json
import signal
import subprocess
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
            assert proc.wait(timeout=30) == 143
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert _busy_record(config_root) is None and not list((config_root / "sessions").glob("*.json")), (
            "its record outlived it"
        )
