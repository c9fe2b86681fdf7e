"""Dead sessions' records in `sessions/`: swept when read, but only those of this machine's pid namespace, and only the
record as read."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agentteams.store import peer_records
from agentteams.store.paths import Layout


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _plant(layout: Layout, pid: int, domain: str) -> Path:
    sessions = peer_records.sessions_dir(layout)
    sessions.mkdir(parents=True, exist_ok=True)
    record = {"pid": pid, "sessionId": f"s-{pid}", "messagingSocketPath": f"/tmp/{pid}.sock", "pidDomain": domain}
    (sessions / f"{pid}.json").write_text(json.dumps(record))
    (sessions / f"{pid}.abc.key").write_text("{}")
    return sessions


def test_a_dead_sessions_record_and_key_go_a_live_one_and_another_namespaces_stay(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    dead, elsewhere = _dead_pid(), _dead_pid()
    sessions = _plant(layout, dead, peer_records.pid_domain())
    _plant(layout, elsewhere, "linux:another-machine:pid:[1]")
    mine = peer_records.new_record("me", str(tmp_path), "me", "/tmp/me.sock", "interactive", "cli", None)
    peer_records.write_record(layout, mine)
    assert [r.session_id for r in peer_records.live_records(layout)] == ["me"]
    assert sorted(p.name for p in sessions.iterdir()) == sorted(
        [f"{os.getpid()}.json", f"{elsewhere}.json", f"{elsewhere}.abc.key"]
    )
