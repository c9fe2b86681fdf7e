"""Held messages between a real claude 2.1.332 and ours, offline (issue 31, item 2): a message from a session of the
other permission-mode class is put to the receiver's person, in each CLI (claude's dialog, our question), and the
sender hears what became of it in the other's words: ours understands claude's "declined", claude ours "released"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from agentteams.mockapi.reqtext import content_text
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.lead_pane import LeadPane
from tests.support.peer_script import tool
from tests.support.stream_json import STREAM_ARGS, sdk_user_line
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(120)
DIALOG = "Held message from another session"  # claude's dialog's title, and our question's opening


def _live(config_root: Path, name: str, status: str | None = None) -> bool:
    for path in (config_root / "sessions").glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("name") == name and status in (None, data.get("status")):
            return True
    return False


def _texts(server: MockServer) -> list[str]:
    return [content_text(r["body"]["messages"][-1].get("content")) for r in server.requests if r["body"].get("tools")]


@pytest.mark.parametrize("claude_version", [rc.NEWEST])
def test_claudes_dialog_declines_ours_and_we_hear_it(
    claude: Path, claude_version: str, cli: Cli, tmux: Tmux, config_root: Path, tmp_path: Path
) -> None:  # fmt: skip
    proj = tmp_path / "proj"
    proj.mkdir()
    script = {"routes": [
        {"name": "ours", "match": {"tools": True, "any": "OURSEND"}, "idle": "ours idle.", "turns": [
            tool("SendMessage", to="theirs", message="PEERMARK-ONE hello"), "ours sent."]},
        {"name": "theirs", "match": {"tools": True}, "turns": ["read it."], "idle": "read."},
    ]}  # fmt: skip
    with MockServer(script) as server:
        rc.seed_home(config_root, [proj], claude_version)
        pane = tmux.start(rc.claude_env(config_root, server.base_url), proj, [str(claude), "-n", "theirs"],
                          session="cc")  # claude's default class (it asks); ours bypasses  # fmt: skip
        env = {**cli.env(), "ANTHROPIC_API_KEY": rc.API_KEY, "ANTHROPIC_BASE_URL": server.base_url,
               "AGENTTEAMS_NO_WARM": "1"}  # fmt: skip
        with subprocess.Popen(cli.argv(*STREAM_ARGS, "--dangerously-skip-permissions", "-n", "ours"), env=env,
                              cwd=proj, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              text=True) as ours:  # fmt: skip
            assert ours.stdin is not None
            wait_until(lambda: _live(config_root, "theirs", "idle"), 60, "claude's record", interval=rc.POLL)
            ours.stdin.write(sdk_user_line("OURSEND go"))
            ours.stdin.flush()
            wait_until(lambda: "❯ Deny — drop it" in tmux.capture(pane), 40, "claude's dialog", interval=rc.POLL,
                       explain=lambda: tmux.capture(pane))  # fmt: skip
            wait_until(lambda: any("is held by that session" in t for t in _texts(server)), 30,
                       "our model told it is held", interval=rc.POLL)  # fmt: skip

            def deny() -> bool:
                """Enter takes the dialog's default, "Deny — drop it and tell the sender it was declined"; claude
                ignores keys for a moment after its dialog appears (a guard against keys meant for the prompt), so
                Enter is pressed again while the dialog stays."""
                if DIALOG not in tmux.capture(pane):
                    return True
                tmux.send(pane, "Enter")
                return False

            wait_until(deny, 30, "claude's dialog to take the Enter", interval=1.0)
            wait_until(lambda: any("was declined by that session's user" in t for t in _texts(server)), 30,
                       "our model told it was declined", interval=rc.POLL,
                       explain=lambda: tmux.capture(pane))  # fmt: skip
            assert not any("PEERMARK-ONE" in t and "<cross-session-message" in t for t in _texts(server))
            ours.stdin.close()
            ours.wait(timeout=30)


@pytest.mark.parametrize("claude_version", [rc.NEWEST])
def test_our_question_lets_claudes_message_in_and_claude_hears_it_released(
    claude: Path, claude_version: str, cli: Cli, tmux: Tmux, config_root: Path, tmp_path: Path
) -> None:  # fmt: skip
    proj = tmp_path / "proj"
    proj.mkdir()
    script = {"routes": [
        {"name": "theirs", "match": {"tools": True, "any": "CLAUDESEND"}, "idle": "claude idle.", "turns": [
            tool("ListAgents"), tool("ToolSearch", query="select:SendMessage"),
            tool("SendMessage", to="ours", message="PEERMARK-FROM-CLAUDE hello"), "claude sent."]},
        {"name": "ours", "match": {"tools": True}, "turns": ["read it."], "idle": "read."},
    ]}  # fmt: skip
    with MockServer(script) as server:
        rc.seed_home(config_root, [proj], claude_version)
        pane = tmux.start(rc.claude_env(config_root, server.base_url), proj,
                          [str(claude), "--dangerously-skip-permissions", "-n", "theirs"], session="cc")  # fmt: skip
        env = {**cli.env(), "ANTHROPIC_API_KEY": rc.API_KEY, "ANTHROPIC_BASE_URL": server.base_url,
               "AGENTTEAMS_NO_WARM": "1", "LANG": "C.UTF-8", "TERM": "xterm-256color"}  # fmt: skip
        ours = LeadPane(tmux, cli, env, proj, ["-n", "ours", "--permission-mode", "default"])  # asks: another class
        wait_until(lambda: _live(config_root, "theirs", "idle") and _live(config_root, "ours"), 60, "both records",
                   interval=rc.POLL)  # fmt: skip
        tmux.send(pane, "CLAUDESEND go", literal=True)
        wait_until(lambda: "CLAUDESEND go" in tmux.capture(pane), 10, "the prompt typed", interval=rc.POLL)
        tmux.send(pane, "Enter")
        ours.wait_text(DIALOG, timeout=40)
        assert "PEERMARK-FROM-CLAUDE hello" in ours.screen()
        assert not any("PEERMARK-FROM-CLAUDE" in t and "<cross-session-message" in t for t in _texts(server))
        ours.type("2")
        ours.press("Enter")
        wait_until(lambda: any("PEERMARK-FROM-CLAUDE" in t and "<cross-session-message" in t for t in _texts(server)),
                   30, "claude's message at our model", interval=rc.POLL)  # fmt: skip
        wait_until(lambda: "released after approval" in tmux.capture(pane), 30, "claude told it was released",
                   interval=rc.POLL, explain=lambda: tmux.capture(pane))  # fmt: skip
