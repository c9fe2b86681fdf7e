"""A teammate asked by its lead to compact, end to end: the lead (`agentteams -p`) sends SendMessage's
compact_request to alice, a teammate in a tmux pane of its own (its own process); alice compacts when idle,
stays in the team, does its next job from the summary and shuts down when asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentteams.agent.compaction import INSTRUCTION_MARK
from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.transcripts.reader import read_entries
from tests.support.cli import Cli
from tests.support.team_run import assert_nothing_left, finish, lead_env, lead_in_tmux
from tests.support.team_script import REQUEST_ID, TEAM, say, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.transcript_checks import faults


def scenario() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("Task", name="alice", team_name=TEAM, description="worker", prompt="You are alice. START-alice"),
        say("alice is starting."),
        {
            **tool("SendMessage", to="alice", message={"type": "compact_request", "content": "keep the marks"}),
            "wait_for": "idle_notification",
        },
        tool("SendMessage", to="alice", message="NEXT-JOB for after the compaction", summary="next job"),
        say("Asked alice to compact, then gave her the next job."),
        {
            **tool("SendMessage", to="alice", message={"type": "shutdown_request", "reason": "done"}),
            "wait_for": "ALICE-NEXT-DONE",
        },
        waiting("Waiting for alice to shut down."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("LEAD-DONE"),
    ]
    alice = "Your name is alice"
    return {"routes": [
        {"name": "alice-shutdown", "match": {"system": alice, "last_prompt": "shutdown_request"},
         "turns": [tool("SendMessage", to="team-lead",
                        message={"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True})]},
        {"name": "alice-summary", "match": {"system": alice, "last_prompt": INSTRUCTION_MARK},
         "turns": [say("ALICE-SUMMARY of the start")]},
        {"name": "alice-next", "match": {"system": alice, "last_prompt": "NEXT-JOB"},
         "turns": [say("ALICE-NEXT-DONE")]},
        {"name": "alice-other", "match": {"system": alice}, "turns": [say("ALICE-STARTED")], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_a_teammate_asked_to_compact_does_so_and_stays_in_its_team(
    cli: Cli, config_root: Path, layout: Layout, work: Path, tmp_path: Path, tmux: Tmux
) -> None:
    with MockServer(scenario()) as server:
        _pane, rc = lead_in_tmux(tmux, cli, lead_env(config_root, server), work, tmp_path, "--teammate-mode", "tmux")
        run = finish(rc, tmp_path, server, timeout=90)
    assert run.rc == 0 and "LEAD-DONE" in run.out, run.err
    routes = run.routes()
    assert routes.count("alice-summary") == 1 and "alice-shutdown" in routes
    summary_at, next_at = routes.index("alice-summary"), routes.index("alice-next")
    assert summary_at < next_at
    ask = json.dumps(server.requests[summary_at]["body"]["messages"])
    assert "keep the marks" in ask and "START-alice" in ask  # the whole conversation, then the instruction
    after = server.requests[next_at]["body"]["messages"]  # alice's next job starts from the summary
    assert "ALICE-SUMMARY of the start" in json.dumps(after[0]) and "START-alice" not in json.dumps(after)
    transcripts = [p for p in (config_root / "projects").glob("*/*.jsonl") if '"agent": "alice"' in p.read_text()]
    [alice] = transcripts
    assert faults(alice.read_text(), alice.stem) == []
    boundaries = [e for e in read_entries(alice) if e.get("subtype") == "compact_boundary"]
    assert [b["compactMetadata"]["trigger"] for b in boundaries] == ["manual"]
    assert_nothing_left(layout, config_root, tmux)
