"""Mid-turn delivery end to end: `agentteams -p` leads alice (a tmux pane, or a thread of the lead's process); the
lead's model messages her while she is inside the 2nd of six tool calls, and her 3rd model request carries it. Then
the interactive lead in a pane: a line typed while it works is shown as queued and goes in the same way.

Each side is held at a named pipe its Bash call reads, so the order is exact without any sleep."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.ui.repl import QUEUED
from tests.support.cli import Cli
from tests.support.lead_pane import START, lead_route, model_calls, tool_turn
from tests.support.steering import STEER, arrivals_on, release, scenario
from tests.support.team_run import assert_nothing_left, finish, lead_env, lead_in_tmux
from tests.support.team_script import TEAM
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until


def read_mark(layout: Layout) -> bool | None:
    """alice's copy of the message on disk: None before it is there, then its `read` flag."""
    try:
        entries = json.loads(layout.inbox_file(TEAM, "alice").read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    found = [e for e in entries if STEER in e["text"]]
    return bool(found[0].get("read")) if found else None


@pytest.mark.parametrize("mode", ["tmux", "in-process"])
def test_a_busy_teammate_gets_the_leads_message_at_the_next_tool_result(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, tmux: Tmux, mode: str
) -> None:
    work, gates = tmp_path / "work", tmp_path / "gates"
    work.mkdir()
    gates.mkdir()
    for name in ("alice-2", "alice-3", "lead"):
        os.mkfifo(gates / name)
    with MockServer(scenario(gates)) as server:
        _pane, rc = lead_in_tmux(tmux, cli, lead_env(config_root, server), work, tmp_path, "--teammate-mode", mode)
        wait_until(lambda: os.path.exists(gates / "alice-2") and read_mark(layout) is None, 1, "no message yet")
        wait_until(lambda: arrivals_on(server, "alice") >= 2, 60, "alice to reach her 2nd call")
        release(gates / "lead")  # the lead's model now sends the message, while alice's 2nd call runs
        wait_until(lambda: read_mark(layout) is not None, 30, "the message in alice's inbox")
        assert read_mark(layout) is False, "unread while no request has carried it"
        assert arrivals_on(server, "alice") == 2, "alice is still inside her 2nd call"
        release(gates / "alice-2")
        release(gates / "alice-3")  # alice is in her 3rd call: the request that carried the message was answered
        assert read_mark(layout) is True, "read once the request carrying it was answered"
        run = finish(rc, tmp_path, server, timeout=90)
    assert run.rc == 0, run.err
    bodies = [r["body"] for r in server.requests if r.get("route") == "alice"]
    assert len(bodies) == 7, "one turn of six calls: the message did not cost a turn"
    carrying = [i for i, b in enumerate(bodies) if STEER in json.dumps(b["messages"][-1])]
    assert carrying == [2], "the 3rd request of the turn carries it as its newest content"
    last = bodies[2]["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"], last
    assert last[1]["text"].startswith('<teammate-message teammate_id="team-lead"'), last[1]
    assert 'verified="false"' not in last[1]["text"], "the lead's signed message verifies"
    assert_nothing_left(layout, config_root, tmux)  # the lead ran in a pane either way


def test_a_line_typed_to_the_busy_lead_is_queued_then_goes_in_at_the_next_tool_result(
    start_lead: Callable[..., Any],
    tmp_path: Path,
) -> None:
    gate = tmp_path / "lead-2"
    os.mkfifo(gate)
    calls = [tool_turn("Bash", command=f"echo call-{i}") for i in range(1, 7)]
    # relative to the lead's working directory (tmp_path/work): a whole temp path can be wider than the pane, and
    # its shown command is then cut short (pytest-xdist's temp paths are longer by a worker directory)
    calls[1] = tool_turn("Bash", command="cat ../lead-2")
    pane, server, _ = start_lead(
        {"routes": [lead_route(*calls, "LEAD-ANSWER")]}, "--dangerously-skip-permissions", "start working"
    )
    pane.wait_text("Bash(cat ../lead-2)", timeout=START)  # the lead is inside its 2nd call
    pane.submit("TYPED-STEER use the other file")
    pane.wait_text(QUEUED)
    assert len(model_calls(server)) == 2 and "sent to the model mid-turn" not in pane.screen()
    release(gate)
    pane.wait_text("⏺ LEAD-ANSWER")
    pane.wait_text("↳ sent to the model mid-turn: “TYPED-STEER use the other file”")
    bodies = model_calls(server)
    assert len(bodies) == 7, "the typed line did not wait for a turn of its own"
    carrying = [i for i, b in enumerate(bodies) if "TYPED-STEER" in json.dumps(b["messages"][-1])]
    assert carrying == [2]
    last = bodies[2]["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]
    assert last[1]["text"] == "TYPED-STEER use the other file"
