"""The lead's duties never wait for a person (issue 32, item 6): while a teammate's permission question waits at the
interactive lead's prompt, the lead keeps beating, and a teammate killed meanwhile is noticed at once: its task pending
again, the lead's model told, and the question asked for it withdrawn (never a command approved for a dead teammate).
The team thread used to put the question itself: no beat (`status` said unresponsive), the death seen ~34 s late."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentteams.store.file.tasks import TaskStore
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence, read_presence
from tests.support.lead_pane import START, lead_route, tool_turn
from tests.support.wait import wait_until

TEAM = "crew"
BEAT = 0.5  # seconds between heartbeats: unresponsive after 4 missed


def routes(target: Path) -> list[dict[str, Any]]:
    alice = {"name": "alice", "match": {"system": "Your name is alice", "last_prompt": "You claimed task #"},
             "turns": [tool_turn("Bash", command=f"touch {target}")], "idle": "alice idle."}  # fmt: skip
    other = {"name": "alice-other", "match": {"system": "Your name is alice"}, "turns": [], "idle": "alice idle."}
    lead = lead_route(
        tool_turn("TeamCreate", team_name=TEAM, description="a test team"),
        tool_turn("TaskCreate", subject="The job", description="touch a file"),
        tool_turn("Task", name="alice", team_name=TEAM, prompt="Do the job.", description="alice works"),
        "SPAWNED-ALICE",
        {"wait_for": "Teammate alice stopped unexpectedly", "text": "LEAD-SAW-DEATH"},
    )
    return [alice, other, lead]


def test_a_waiting_question_holds_up_neither_the_heartbeat_nor_a_death(
    start_lead: Callable[..., Any], layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTTEAMS_HEARTBEAT_SECONDS", str(BEAT))
    target = tmp_path / "work" / "touched"
    pane, _server, _work = start_lead({"routes": routes(target)}, "--teammate-mode", "tmux", "build a team")
    pane.wait_text("Teammate alice wants to run a command", timeout=START)
    pane.wait_text("1 yes · 2 yes")  # its prompt (cut short: alice's pane took half the width)

    # the lead beats on while the question waits: 4 beats missed would be "unresponsive"
    asked = time.time() * 1000

    def lead() -> Presence | None:
        return read_presence(layout, TEAM, "team-lead")

    wait_until(lambda: (p := lead()) is not None and p.updated_at > asked + 6 * BEAT * 1000, 15,
               "the lead's heartbeat while the question waits")  # fmt: skip
    record = lead()
    assert record is not None and record.liveness() == "running"

    alice = read_presence(layout, TEAM, "alice")
    assert alice is not None and alice.asking
    task = TaskStore(layout).get(TEAM, "1")
    assert (task.owner, task.status) == ("alice", "in_progress")
    killed = time.monotonic()
    os.kill(alice.pid, signal.SIGKILL)
    wait_until(lambda: TaskStore(layout).get(TEAM, "1").status == "pending", 5, "alice's task pending again")
    print(f"death noticed, task freed: {time.monotonic() - killed:.1f} s")
    pane.wait_text("Teammate alice stopped unexpectedly")
    # the question for her is withdrawn: the prompt is the lead's again, and the person was told why
    pane.wait_text("withdrawn")
    pane.wait_text("⏺ LEAD-SAW-DEATH")
    pane.idle()  # its toolbar, which a waiting question replaces
    assert not target.exists(), "a command was run for a dead teammate"
