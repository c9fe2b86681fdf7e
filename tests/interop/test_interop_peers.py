"""Messages between independent sessions with the real claude 2.1.332 (issue 31, items 2 and 4), offline: a real
interactive claude and an SDK session of ours on one config root find each other (ListAgents) and message each other
(SendMessage), each message reaching the other's model in the `<cross-session-message>` wrapper. In tmux; the tmux
fixture ends every claude process it started."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

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


def _last_user(request: dict[str, Any]) -> str:
    return content_text(request["body"]["messages"][-1].get("content"))


def _delivered(server: MockServer, marker: str) -> list[str]:
    texts = [_last_user(r) for r in server.requests if r["body"].get("tools")]
    return [t for t in texts if marker in t and "<cross-session-message" in t]


@pytest.mark.parametrize("claude_version", [rc.NEWEST])
def test_real_claude_and_ours_message_each_other(
    claude: Path, claude_version: str, cli: Cli, tmux: Tmux, config_root: Path, tmp_path: Path
) -> None:  # fmt: skip
    proj = tmp_path / "proj"
    proj.mkdir()
    script = {"routes": [
        {"name": "theirs", "match": {"tools": True, "any": "CLAUDESEND"}, "idle": "claude idle.", "turns": [
            tool("ListAgents"), tool("ToolSearch", query="select:SendMessage"),
            tool("SendMessage", to="ours", message="PEERMARK-FROM-CLAUDE hello"), "claude sent."]},
        {"name": "ours-send", "match": {"tools": True, "any": "OURSEND"}, "idle": "ours idle.", "turns": [
            tool("ListAgents"), tool("SendMessage", to="theirs", message="PEERMARK-FROM-OURS hello"), "ours sent."]},
        {"name": "heard", "match": {"tools": True, "any": "PEERMARK-FROM"}, "turns": ["read it."], "idle": "read."},
    ]}  # fmt: skip
    with MockServer(script, log_path=tmp_path / "req.jsonl") as server:
        rc.seed_home(config_root, [proj], claude_version)
        env = rc.claude_env(config_root, server.base_url)
        pane = tmux.start(env, proj, [str(claude), "--dangerously-skip-permissions", "-n", "theirs"], session="cc")
        ours_env = {**cli.env(), "ANTHROPIC_API_KEY": rc.API_KEY, "ANTHROPIC_BASE_URL": server.base_url,
                    "AGENTTEAMS_NO_WARM": "1"}  # fmt: skip
        ours = cli.popen(*STREAM_ARGS, "--dangerously-skip-permissions", "-n", "ours", env=ours_env, cwd=proj,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip

        def explain() -> str:
            routes = [(r.get("route"), r.get("turn")) for r in server.requests]
            return f"routes: {routes}\n--- claude:\n{tmux.capture(pane)}"

        wait_until(lambda: (session_record(config_root, "theirs") or {}).get("status") == "idle", 60, "claude's record",
                   explain=explain)  # fmt: skip
        wait_until(lambda: session_record(config_root, "ours") is not None, 30, "our record", explain=explain)

        # real claude -> ours: its ListAgents lists ours, its SendMessage reaches our model
        tmux.send(pane, "CLAUDESEND go", literal=True)
        wait_until(lambda: "CLAUDESEND go" in tmux.capture(pane), 10, "the prompt typed", explain=explain)
        tmux.send(pane, "Enter")
        wait_until(lambda: bool(_delivered(server, "PEERMARK-FROM-CLAUDE")), 60, "claude's message at ours",
                   explain=explain)  # fmt: skip
        got = _delivered(server, "PEERMARK-FROM-CLAUDE")[0]
        assert 'from-name="theirs"' in got and 'from-mode="bypass"' in got
        listed = [_last_user(r) for r in server.requests if r.get("route") == "theirs" and r.get("turn") == 1]
        assert listed and "ours [" in listed[0], "claude's ListAgents lists our session"

        # ours -> real claude: our ListAgents lists claude's session, our SendMessage reaches its model
        assert ours.stdin is not None
        ours.stdin.write(sdk_user_line("OURSEND go"))
        ours.stdin.flush()
        wait_until(lambda: bool(_delivered(server, "PEERMARK-FROM-OURS")), 60, "our message at claude",
                   explain=explain)  # fmt: skip
        got = _delivered(server, "PEERMARK-FROM-OURS")[0]
        assert 'from-name="ours"' in got and 'from-mode="bypass"' in got
        listed = [_last_user(r) for r in server.requests if r.get("route") == "ours-send" and r.get("turn") == 1]
        assert listed and "theirs [" in listed[0], "our ListAgents lists claude's session"
        ours.stdin.close()
        ours.wait(timeout=30)
