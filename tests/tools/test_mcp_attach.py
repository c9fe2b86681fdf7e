"""Which sessions wait for their MCP servers before the first request, as Claude Code 2.1.332's do: -p and stream-json
sessions (not interactive) and in-process teammates start them at once and wait; the REPL's lead starts them after
its first request or 1 s, and a pane teammate (an interactive session in claude) after its first request, neither
waiting. No server process: the hub's start is recorded, not run."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from agentteams.agent.mcp_servers import McpLink, attach_mcp
from agentteams.agent.mcp_wait import IDLE_START
from agentteams.tools.mcp.config import McpFlags
from agentteams.tools.mcp.hub import McpHub

SERVER = json.dumps({"mcpServers": {"srv": {"command": "no-such-server", "args": []}}})


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set when a hub is started (its start recorded, nothing launched)."""
    event = threading.Event()

    def start(hub: McpHub) -> McpHub:
        event.set()
        return hub

    monkeypatch.setattr(McpHub, "start", start)
    return event


def session(tmp_path: Path, *, interactive: bool, teammate: bool) -> Any:
    """What attach_mcp uses of a session: its options, agent, policy, interrupt and event listeners."""
    options = SimpleNamespace(mcp=McpFlags((SERVER,), strict=True), cwd=tmp_path, settings=SimpleNamespace(merged={}),
                              interactive=interactive, identity=object() if teammate else None)  # fmt: skip
    agent = SimpleNamespace(tools={}, before_call=None, late_tool=None, messages=[])
    return SimpleNamespace(options=options, agent=agent, policy=SimpleNamespace(mode="default"),
                           ctx=SimpleNamespace(interrupt=threading.Event()), listen=lambda _fn: None)  # fmt: skip


def attached(tmp_path: Path, *, interactive: bool, teammate: bool = False) -> McpLink:
    link = attach_mcp(cast(Any, session(tmp_path, interactive=interactive, teammate=teammate)))
    assert link.hub is not None and link._starter is not None
    return link


def test_a_print_or_sdk_session_starts_its_servers_at_once_and_waits(tmp_path: Path, started: threading.Event) -> None:
    link = attached(tmp_path, interactive=False)
    assert started.wait(10), "the servers were not started with the session"
    assert link._first_wait is not None  # its first request waits for them


def test_the_repl_and_a_pane_teammate_never_wait(tmp_path: Path, started: threading.Event) -> None:
    repl, pane = attached(tmp_path, interactive=True), attached(tmp_path, interactive=True, teammate=True)
    for link in (repl, pane):  # the REPL's starts after 1 s idle, maybe after this test: the real start does nothing
        assert link.hub is not None
        link.hub._closed = True
    assert repl._first_wait is None and pane._first_wait is None
    assert repl._starter is not None and repl._starter.idle == IDLE_START  # the person may still be typing
    assert pane._starter is not None and pane._starter.idle is None  # its first request comes: started then
    assert not started.is_set()


def test_an_in_process_teammate_told_to_start_now_waits(tmp_path: Path, started: threading.Event) -> None:
    link = attached(tmp_path, interactive=True, teammate=True)
    link.start_now()  # what its runtime does
    assert started.wait(10) and link._first_wait is not None


def test_without_a_server_there_is_nothing_to_start_or_wait_for(tmp_path: Path, started: threading.Event) -> None:
    bare = session(tmp_path, interactive=False, teammate=False)
    bare.options.mcp = McpFlags((), strict=True)
    link = attach_mcp(cast(Any, bare))
    link.start_now()
    link.wait_ready()
    assert link.hub is None and not started.is_set()
