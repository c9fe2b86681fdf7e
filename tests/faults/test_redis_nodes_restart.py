"""Redis killed -9 and restarted while three teammates on two nodes work (issue 32, item 3): every member kept, no
task changing owner, every acknowledged message delivered once, the team finishing; and a Redis that comes back
empty: the lead says so and ends within a minute, the teammates leave, and nothing of the team is written again."""

from __future__ import annotations

import time
from pathlib import Path

from agentteams.mockapi import MockServer
from tests.support import redis_team as rt
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger
from tests.support.redislab import RedisServer
from tests.support.team_script import TEAM
from tests.support.wait import wait_until

ENV = {"AGENTTEAMS_STORE_RETRY": "60"}


def test_three_teammates_on_two_nodes_ride_out_a_redis_kill_and_restart(
    cli: Cli, tmp_path: Path, redis_server: RedisServer, ledger: FaultLedger
) -> None:
    """And a node killed after it: reported and its task freed within 15 s, done by a teammate left."""
    gate, log = tmp_path / "go", tmp_path / "work.log"
    store = rt.store_of(redis_server)
    with MockServer(rt.scenario(gate, log, gone="bob")) as api:
        team = rt.start_team(cli, redis_server, api, tmp_path, ENV)
        before = rt.claims(store)
        inboxes = {n: [e.identity for e in store.mail.read_live(TEAM, n)] for n in ("team-lead", *rt.NAMES)}
        redis_server.proc.kill()  # SIGKILL: no shutdown save, only what the append-only file holds
        redis_server.proc.wait(timeout=10)
        ledger.faults += 1
        wait_until(lambda: "is unreachable" in team.stderr(), 15, "the lead to say the store went away",
                   explain=team.stderr)  # fmt: skip
        time.sleep(4)  # the outage itself: longer than a node's record lives (3 s), as a real one is
        redis_server.kill_and_restart()  # already dead: starts it again on its port, replaying its AOF
        store = rt.store_of(redis_server)
        assert rt.claims(store) == before, "a claim was lost in the restart"
        for name, ids in inboxes.items():
            now = [e.identity for e in store.mail.read_live(TEAM, name)]
            ledger.writes += len(ids)
            ledger.lost += len([i for i in ids if i not in now])
        # the nodes beat again; a lead that judged its members by the records it found missing drops them now
        wait_until(lambda: sorted(r.name for r in store.nodes.live()) == ["n1", "n2"], 15, "both nodes to beat")
        settle = time.monotonic() + 6  # two node lifetimes and a lead's look: what the restart left must hold
        while time.monotonic() < settle:
            assert rt.members(store) == sorted(["team-lead", *rt.NAMES]), team.stderr()
            assert rt.claims(store) == before, f"a task changed owner after the restart:\n{team.stderr()}"
            time.sleep(0.2)  # sampling the store through a window, not waiting for an event
        bobs = next(task_id for task_id, owner in before.items() if owner == "bob")
        rt.kill_node(team, "n2")
        ledger.faults += 1
        took = wait_until(lambda: rt.freed(store, "bob", bobs), 30, "bob reported dead and his task freed",
                          explain=team.stderr)  # fmt: skip
        ledger.stranded += int(took > 15)
        assert took <= 15, f"the killed node's teammate was freed after {took:.1f} s"
        gate.touch()
        wait_until(team.ended, 120, "the team to finish", explain=team.stderr)
        err, out = team.stderr(), team.out.read_text()
        bodies = rt.lead_requests(api)
        rt.stop_nodes(team)
    assert team.lead.returncode == 0, err
    assert "LEAD-DONE" in out, out
    done = sorted(log.read_text().split())
    ledger.duplicates += len(done) - len(set(done))
    assert sorted(line.split("-")[1] for line in done) == ["1", "2", "3"], done
    assert f"task-{bobs}-by-bob" not in done, f"bob's task was done by one left: {done}"
    for i in (1, 2, 3):  # the lead's model got each report once (the last request holds the whole conversation)
        seen = bodies[-1].count(f"finished task #{i}\\n</teammate-message>")  # as JSON: the newline escaped
        ledger.duplicates += max(0, seen - 1)
        assert seen == 1, f"finished task #{i} reached the lead's model {seen} times"
    assert bodies[-1].count("Teammate bob stopped unexpectedly") >= 1, "the lead's model was not told bob died"
    for name in ("amy", "cal"):
        assert f"Teammate {name} stopped unexpectedly" not in bodies[-1], f"{name} was taken for dead"
    assert "not a member" not in err, err
    assert err.count("is unreachable") == 1, f"one line for the outage, not one per retry:\n{err}"
    assert "Traceback" not in err, err


def test_a_redis_back_empty_ends_the_team_said_once_and_nothing_written(
    cli: Cli, tmp_path: Path, redis_server: RedisServer, ledger: FaultLedger
) -> None:
    gate, log = tmp_path / "go", tmp_path / "work.log"
    with MockServer(rt.scenario(gate, log)) as api:
        team = rt.start_team(cli, redis_server, api, tmp_path, ENV)
        rt.restart_empty(redis_server)
        ledger.faults += 1
        back = time.monotonic()
        store = rt.store_of(redis_server)
        gate.touch()  # the teammates finish their commands and find no task, no lead, no team
        wait_until(team.ended, 60, "the lead to end once its team is gone", explain=team.stderr)
        ended = time.monotonic() - back
        wait_until(lambda: all(r.running == [] for r in store.nodes.live()), 20, "the nodes to stop the teammates")
        err = team.stderr()
        node_errs = {n: p.read_text() for n, p in team.node_errs.items()}
        stray = rt.stray_keys(store)
    ledger.hangs += int(ended >= 60)
    assert ended < 60, f"the lead took {ended:.0f} s to end"
    assert err.count("is gone from its store") == 1, err
    assert "the team has ended" in err, err
    assert "no team named" not in err + "".join(node_errs.values()), (err, node_errs)
    assert stray == [], f"keys written for a team the store no longer has: {stray}"
    assert "Traceback" not in err + "".join(node_errs.values()), (err, node_errs)
    rt.stop_nodes(team)
