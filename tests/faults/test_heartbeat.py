"""Heartbeats (issue 14, item 8): a real teammate process that is SIGSTOPped stops beating and `agentteams status`
shows it unresponsive, its task still its own; SIGCONT brings it back; once it has exited, status shows it gone,
not idle."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import uuid
from pathlib import Path

from agentteams.mockapi import MockServer
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence, read_presence
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger
from tests.support.team_script import say
from tests.support.wait import wait_until

TEAM = "beats"
BEAT = 0.3  # seconds: unresponsive after four missed beats


def state_of(cli: Cli, name: str) -> str:
    shown = cli("status", TEAM, "--json")
    assert shown.returncode == 0, shown.stderr
    return str(next(m["state"] for m in json.loads(shown.stdout)["members"] if m["name"] == name))


def test_a_stopped_teammate_is_unresponsive_and_an_exited_one_gone(
    cli: Cli, layout: Layout, tmp_path: Path, ledger: FaultLedger
) -> None:
    teams = TeamStore(layout)
    teams.create(TEAM, cwd=str(tmp_path))
    teams.add_member(TEAM, NewMember(name="alice", cwd=str(tmp_path)))
    tasks = TaskStore(layout)
    task = tasks.create(TEAM, "hers")
    tasks.update(TEAM, task.id, owner="alice", status="in_progress")
    spec = {"routes": [{"name": "any", "match": {}, "turns": [say("ok")]}]}
    with MockServer(spec) as server:
        env = {**cli.env(), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-key-0123456789",
               "AGENTTEAMS_HEARTBEAT_SECONDS": str(BEAT)}  # fmt: skip
        proc = cli.popen(
            f"--agent-id=alice@{TEAM}", "--agent-name", "alice", "--team-name", TEAM, "--agent-color", "blue",
            "--parent-session-id", str(uuid.uuid4()), env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip

        def record() -> Presence | None:
            return read_presence(layout, TEAM, "alice")

        try:
            wait_until(lambda: (p := record()) is not None and p.state == "idle", 30, "alice to idle")
            first = record()
            assert first is not None and first.pid == proc.pid and first.heartbeat_ms == int(BEAT * 1000)
            wait_until(lambda: (p := record()) is not None and p.updated_at > first.updated_at, 10, "a beat")
            ledger.writes += 1  # a beat seen
            assert state_of(cli, "alice") == "idle"

            os.kill(proc.pid, signal.SIGSTOP)
            ledger.faults += 1
            wait_until(lambda: state_of(cli, "alice") == "unresponsive", 20, "status to show alice unresponsive")
            ledger.lost += tasks.get(TEAM, task.id).owner != "alice"  # a stopped process may resume: its task stays

            os.kill(proc.pid, signal.SIGCONT)
            wait_until(lambda: state_of(cli, "alice") == "idle", 20, "alice to beat again")
            ledger.writes += 1

            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
            ledger.faults += 1
            assert state_of(cli, "alice") == "gone"  # exited, still a member: not idle
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                proc.kill()
            proc.wait(timeout=10)
