"""A real claude 2.1.332 that exits tells the sessions that asked to hear of its next idle (notify_when_idle): it
takes its record away first, then sends `peer_idle_notice` with `state: "exited"` (seen offline). Ours, which asked,
takes that last frame by the process it asked (the kernel's pid), and its model hears the session has exited."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from agentteams.mockapi.reqtext import content_text
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.peer_script import session_record, tool
from tests.support.stream_json import STREAM_ARGS, sdk_user_line
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("claude_version", [rc.NEWEST])
def test_a_real_claude_that_exits_tells_ours_which_asked(
    claude: Path, claude_version: str, cli: Cli, tmux: Tmux, config_root: Path, tmp_path: Path
) -> None:  # fmt: skip
    proj = tmp_path / "proj"
    proj.mkdir()
    never = tmp_path / "never"
    script = {"routes": [
        {"name": "ours", "match": {"tools": True, "any": "OURSEND"}, "idle": "ours idle.", "turns": [
            tool("SendMessage", to="theirs", notify_when_idle=True), "ours subscribed."]},
        {"name": "theirs", "match": {"tools": True, "any": "CLAUDEWORK"}, "idle": "claude idle.", "turns": [
            tool("Bash", command=f"until [ -f {never} ]; do sleep 1; done", description="wait")]},
    ]}  # fmt: skip
    with MockServer(script) as server:
        rc.seed_home(config_root, [proj], claude_version)
        pane = tmux.start(rc.claude_env(config_root, server.base_url), proj,
                          [str(claude), "--dangerously-skip-permissions", "-n", "theirs"], session="cc")  # fmt: skip
        env = {**cli.env(), "ANTHROPIC_API_KEY": rc.API_KEY, "ANTHROPIC_BASE_URL": server.base_url,
               "AGENTTEAMS_NO_WARM": "1"}  # fmt: skip
        with subprocess.Popen(cli.argv(*STREAM_ARGS, "--dangerously-skip-permissions", "-n", "ours"), env=env,
                              cwd=proj, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              text=True) as ours:  # fmt: skip
            assert ours.stdin is not None
            wait_until(lambda: (session_record(config_root, "theirs") or {}).get("status") == "idle", 60,
                       "claude's record", interval=rc.POLL)  # fmt: skip
            tmux.send(pane, "CLAUDEWORK go", literal=True)
            wait_until(lambda: "CLAUDEWORK go" in tmux.capture(pane), 10, "the prompt typed", interval=rc.POLL)
            tmux.send(pane, "Enter")
            wait_until(lambda: (session_record(config_root, "theirs") or {}).get("status") == "busy", 30,
                       "claude busy", interval=rc.POLL)  # fmt: skip
            ours.stdin.write(sdk_user_line("OURSEND go"))
            ours.stdin.flush()
            wait_until(lambda: any(r.get("route") == "ours" and r.get("turn") == 1 for r in server.requests), 30,
                       "our subscription sent", interval=rc.POLL)  # fmt: skip
            record = session_record(config_root, "theirs")
            assert record is not None and record["status"] == "busy", "claude still busy: no idle notice yet"
            os.kill(record["pid"], signal.SIGTERM)

            def exited() -> list[str]:
                texts = [content_text(r["body"]["messages"][-1].get("content")) for r in server.requests]
                return [t for t in texts if "[Cross-session idle notice]" in t]

            wait_until(lambda: bool(exited()), 30, "our model told claude exited", interval=rc.POLL)
            assert "theirs, which you asked to hear about, has exited" in exited()[0], exited()
            ours.stdin.close()
            ours.wait(timeout=30)
