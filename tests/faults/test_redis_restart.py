"""Redis killed -9 and restarted on its port (AOF replay) while a team runs on it (issue 18, item 5): the lead and
both tmux teammates ride out the outage by themselves (one line said, no crash, no hang), no claim and no
acknowledged message is lost, and the team finishes its three tasks and shuts down as it would have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.redis.connection import parse_url
from agentteams.store.redis.store import RedisStore
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger
from tests.support.redislab import RedisServer
from tests.support.team_run import assert_nothing_left, check_team_run, finish, lead_env, lead_in_tmux
from tests.support.team_script import TEAM, team_scenario
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until


def gated_scenario(gate: Path) -> dict[str, Any]:
    """The teams issue's scenario, each teammate's work held (a shell loop in its Bash call) until `gate` exists."""
    script = team_scenario()
    for route in script["routes"]:
        if route["name"].endswith("-claim"):
            bash = route["turns"][0]["content"][0]["input"]
            bash["command"] = f"until [ -e {gate} ]; do sleep 0.05; done; {bash['command']}"
    return script


def claims(store: RedisStore) -> dict[str, str | None]:
    return {t.id: t.owner for t in store.tasks.list_tasks(TEAM) if t.status == "in_progress"}


def test_a_team_rides_out_a_redis_kill_and_restart(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, tmux: Tmux, redis_server: RedisServer,
    ledger: FaultLedger,
) -> None:  # fmt: skip
    work, gate = tmp_path / "work", tmp_path / "go"
    work.mkdir()
    store = RedisStore(parse_url(redis_server.url))
    with MockServer(gated_scenario(gate)) as server:
        env = {**lead_env(config_root, server), "AGENTTEAMS_STORE": redis_server.url, "AGENTTEAMS_STORE_RETRY": "60"}
        _pane, rc = lead_in_tmux(tmux, cli, env, work, tmp_path, "--teammate-mode", "tmux")
        wait_until(lambda: len(claims(store)) == 2, 60, "both teammates to claim a task")
        before = claims(store)
        inboxes = {n: [e.identity for e in store.mail.read_live(TEAM, n)] for n in ("team-lead", "alice", "bob")}
        redis_server.proc.kill()  # SIGKILL: no shutdown save, only what the append-only file holds
        redis_server.proc.wait(timeout=10)
        ledger.faults += 1
        err = tmp_path / "err.txt"
        wait_until(lambda: "is unreachable" in err.read_text(), 10, "the lead to say the store went away")
        assert not (rc.exists() and rc.read_text().strip()), "the lead ended while the store was down"
        redis_server.kill_and_restart()  # already dead: starts it again on its port, replaying its AOF
        store = RedisStore(parse_url(redis_server.url))
        assert claims(store) == before, "a claim was lost in the restart"
        for name, ids in inboxes.items():
            now = [e.identity for e in store.mail.read_live(TEAM, name)]
            ledger.writes += len(ids)
            ledger.lost += len([i for i in ids if i not in now])
        gate.touch()
        run = finish(rc, tmp_path, server, timeout=120)
    check_team_run(run, work)
    lines = (work / "work.log").read_text().split()
    ledger.duplicates += len(lines) - len(set(lines))
    assert "is back after" in run.err, run.err
    assert run.err.count("is unreachable") == 1, f"one line for the outage, not one per retry:\n{run.err}"
    assert "Traceback" not in run.err and "internal error" not in run.err, run.err
    assert json.dumps(run.routes()).count("-shutdown") >= 2
    assert_nothing_left(layout, config_root, tmux)
