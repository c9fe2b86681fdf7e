"""Task leases (issue 15, item 3): a real teammate process claims a task and is SIGSTOPped mid-turn; its lease runs
out and the lead's sweep sends the task back to pending; continued, its completion is refused and its model reads
why in the next request's tool result; the task is not completed by it."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.leases import Lease
from agentteams.store.paths import Layout
from agentteams.store.presence import read_presence
from agentteams.team.delivery import TeamEvent
from agentteams.team.lease_keeper import LeaseKeeper
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger
from tests.support.team_script import say, tool
from tests.support.wait import wait_until

TEAM = "leased"
LEASE = 1.5  # seconds; the owner renews every beat (0.2 s) once half of it is gone


def tool_results(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block for m in record["body"]["messages"] if isinstance(m["content"], list)
        for block in m["content"] if block.get("type") == "tool_result"
    ]  # fmt: skip


def test_a_stopped_owners_task_returns_and_its_late_completion_is_refused(
    cli: Cli, layout: Layout, tmp_path: Path, ledger: FaultLedger
) -> None:
    TeamStore(layout).create(TEAM, cwd=str(tmp_path))
    TeamStore(layout).add_member(TEAM, NewMember(name="alice", cwd=str(tmp_path)))
    tasks = TaskStore(layout)
    task = tasks.create(TEAM, "Write parser", "parse the input")
    done = {**tool("TaskUpdate", taskId=task.id, status="completed"), "delay_ms": 3000}  # stopped while it waits
    spec = {"routes": [
        {"name": "claim", "match": {"last_prompt": "You claimed task #"}, "turns": [done, say("Finished.")],
         "idle": "Noted."},
        {"name": "other", "match": {}, "turns": [], "idle": "Noted."},
    ]}  # fmt: skip
    with MockServer(spec) as server:
        env = {**cli.env(), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-key-0123456789",
               "AGENTTEAMS_HEARTBEAT_SECONDS": "0.2", "AGENTTEAMS_LEASE_SECONDS": str(LEASE)}  # fmt: skip
        proc = cli.popen(
            f"--agent-id=alice@{TEAM}", "--agent-name", "alice", "--team-name", TEAM, "--agent-color", "blue",
            "--parent-session-id", str(uuid.uuid4()), env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            wait_until(lambda: any(r["route"] == "claim" for r in server.arrivals), 30, "alice's claimed turn")
            # her presence record (written once her request has left) is what makes her an owner of ours, whose
            # lease a sweep may take back: a Claude Code teammate's task falls back to liveness instead
            wait_until(lambda: read_presence(layout, TEAM, "alice") is not None, 10, "alice's presence record")
            os.kill(proc.pid, signal.SIGSTOP)  # before the 3 s delayed answer reaches it
            ledger.faults += 1
            claimed = Lease.of(tasks.get(TEAM, task.id))
            assert claimed is not None and (claimed.owner, claimed.token, claimed.seconds) == ("alice", 1, LEASE)

            sweeper, notices = LeaseKeeper(tasks, "team-lead"), []  # what the lead's team thread runs

            def returned() -> bool:
                notices.extend(sweeper.tick(TEAM))
                back = tasks.get(TEAM, task.id)
                return back.owner is None and back.status == "pending"

            wait_until(returned, 20, "the stopped owner's task to return to pending")
            assert notices == [TeamEvent("notice", "alice", notices[0].text)] and "is pending again" in notices[0].text

            os.kill(proc.pid, signal.SIGCONT)
            ledger.writes += 1  # its completion, attempted
            [after] = server.wait_for_requests(1, 30, lambda r: r["route"] == "claim" and r["turn"] == 1)
            [result] = tool_results(after)
            text = str(result["content"])
            assert result.get("is_error"), result
            assert f"task #{task.id} was taken back from you after your lease expired" in text, text
            assert f"not renewed for {LEASE:g}s" in text and "it is now pending with no owner" in text, text
            final = tasks.get(TEAM, task.id)  # pending, or (once its turn has ended) claimed by alice afresh
            ledger.lost += final.status == "completed"  # the refused completion left nothing behind
            assert final.status != "completed" and final.owner in (None, "alice")
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                proc.terminate()
            proc.wait(timeout=15)
