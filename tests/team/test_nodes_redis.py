"""Nodes on the Redis store, with a real redis-server: two "machines" (a config root, a working directory and a
process tree each) that share nothing but the store URL. A node registers there, its record expires while it is
cut off and comes back with it; 8 processes, 4 per machine, claim 200 tasks, each exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentteams.store.redis.connection import parse_url
from agentteams.store.redis.store import RedisStore
from tests.support.cli import Cli
from tests.support.redislab import RedisServer
from tests.support.repo import ROOT
from tests.support.wait import wait_until


def machine(tmp_path: Path, name: str) -> tuple[Path, dict[str, str]]:
    """A machine's directory and environment: its own config root, no store in the environment (a node is told)."""
    home = tmp_path / name
    (home / "claude").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "AGENTTEAMS_STORE")}
    env.update(CLAUDE_CONFIG_DIR=str(home / "claude"), ANTHROPIC_API_KEY=f"test-key-{name}-0123456789")
    return home, env


def test_a_node_registers_expires_when_cut_off_and_comes_back(
    cli: Cli, redis_server: RedisServer, tmp_path: Path
) -> None:
    store = RedisStore(parse_url(redis_server.url))
    home, env = machine(tmp_path, "machine-a")
    errors = (tmp_path / "node.err").open("w")  # read while it runs: its warning follows its record's return
    node = cli.popen("node", "--store", redis_server.url, "--name", "n1", "--slots", "3", "--workdir", str(home),
                     "--heartbeat", "0.25", env=env, stdout=subprocess.PIPE, stderr=errors)  # fmt: skip
    wait_until(lambda: store.nodes.read("n1") is not None, 20, "the node to register in redis")
    record = store.nodes.read("n1")
    assert record is not None and (record.slots, record.pid, record.running) == (3, node.pid, [])
    assert not (home / "claude" / "nodes").exists(), "the node wrote its record to files, not to the store it was given"
    node.send_signal(signal.SIGSTOP)
    try:
        cut = time.monotonic()
        wait_until(lambda: store.nodes.read("n1") is None, 10, "the cut-off node's record to expire")
        assert time.monotonic() - cut < 6.0  # its 3 s ttl, with room for a loaded machine
        assert store.nodes.live() == []
    finally:
        node.send_signal(signal.SIGCONT)
    wait_until(lambda: store.nodes.read("n1") is not None, 10, "the node, back, to register again")
    # the warning comes once the record is written again: a SIGTERM at once could land between the two (CI)
    wait_until(lambda: "out of touch" in (tmp_path / "node.err").read_text(), 10, "the node's warning")
    node.send_signal(signal.SIGTERM)
    out, _ = node.communicate(timeout=20)
    errors.close()
    err = (tmp_path / "node.err").read_text()
    assert node.returncode == 0, err
    assert "agentteams: warning: node n1: back after" in err and "out of touch" in err, err
    assert "node n1: 3 slots" in out and redis_server.url in out
    assert store.nodes.live() == [] and store.nodes.read("n1") is None


def test_a_second_node_of_the_same_name_is_refused(cli: Cli, redis_server: RedisServer, tmp_path: Path) -> None:
    home, env = machine(tmp_path, "machine-a")
    first = cli.popen("node", "--store", redis_server.url, "--name", "n1", "--workdir", str(home), env=env,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    store = RedisStore(parse_url(redis_server.url))
    wait_until(lambda: store.nodes.read("n1") is not None, 20, "the first node to register")
    second = cli("node", "--store", redis_server.url, "--name", "n1", "--workdir", str(home), env=env)
    assert second.returncode == 1
    assert second.stderr.strip().splitlines() == [
        f"agentteams: error: node n1 is already registered (pid {first.pid} on {os.uname().nodename}): "
        "choose another --name"
    ]
    bad = cli("node", "--store", "redis://user:secret@127.0.0.1:1/0", env=env)
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1 and "secret" not in bad.stderr
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=20)


def test_eight_processes_on_two_machines_claim_200_tasks_each_once(redis_server: RedisServer, tmp_path: Path) -> None:
    store = RedisStore(parse_url(redis_server.url))
    team = store.teams.create("race").name
    count = 200
    for i in range(count):
        store.tasks.create(team, f"t{i}")
    go = tmp_path / "go"
    procs = []
    for m in ("machine-a", "machine-b"):
        home, env = machine(tmp_path, m)
        env["AGENTTEAMS_STORE"] = redis_server.url  # the only thing the machines share
        env["PYTHONPATH"] = str(ROOT)
        for n in range(4):
            argv = [sys.executable, "-m", "tests.contract.worker", "claim", f"{m}-w{n}", str(go)]
            procs.append((f"{m}-w{n}", subprocess.Popen(argv, cwd=home, env=env, stdout=subprocess.PIPE, text=True)))
    try:
        # all eight at the start line first: the four of the machine started first once took every task before the
        # other's had imported anything (two cores under CI load)
        ready = [tmp_path / f"go.ready.{agent}" for agent, _p in procs]
        wait_until(lambda: all(r.exists() for r in ready), 60, "every worker to be ready")
        go.touch()
        outs = {agent: p.communicate(timeout=120)[0] for agent, p in procs}
    finally:
        for _agent, p in procs:
            p.kill()
    assert [p.returncode for _a, p in procs] == [0] * 8
    won = [
        (line.split()[1], agent) for agent, out in outs.items() for line in out.splitlines() if line.startswith("won")
    ]
    assert sorted((i for i, _ in won), key=int) == [str(i) for i in range(1, count + 1)], "each task once, none twice"
    assert {t.id: t.owner for t in store.tasks.list_tasks(team)} == dict(won)
    assert len({a for _i, a in won if a.startswith("machine-a")}) >= 1
    assert len({a for _i, a in won if a.startswith("machine-b")}) >= 1


def test_a_node_outlives_a_redis_restart(cli: Cli, redis_server: RedisServer, tmp_path: Path) -> None:
    """kill -9 and restart of the server (AOF replay): the node goes on beating and answering orders by itself."""
    from agentteams.store.node_records import NodeOrder

    home, env = machine(tmp_path, "machine-a")
    node = cli.popen("node", "--store", redis_server.url, "--name", "n1", "--workdir", str(home), "--heartbeat",
                     "0.25", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    store = RedisStore(parse_url(redis_server.url))
    wait_until(lambda: store.nodes.read("n1") is not None, 20, "the node to register")
    redis_server.kill_and_restart()
    store = RedisStore(parse_url(redis_server.url))
    restarted = time.time() * 1000
    wait_until(lambda: getattr(store.nodes.read("n1"), "updated_at", 0) > restarted, 20, "the node to beat again")
    order = NodeOrder("spawn", "proj", "alice", lead_key="not-a-key")
    store.nodes.order("n1", order)
    reply = store.nodes.await_reply(order.order_id, 20)
    assert reply is not None and not reply.ok and reply.error == "the lead's verify key is malformed"
    node.send_signal(signal.SIGTERM)
    _out, err = node.communicate(timeout=20)
    assert node.returncode == 0 and "Traceback" not in err, err


NODE_KEYS_ACL = ["~at:node:*", "%RW~at:nodes", "~at:reply:*"]  # the README's addition for teams that use nodes


def test_node_keys_under_a_teams_own_acl_user(redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A team's user with the node keys added uses nodes; one without them sees none (and places teammates beside
    its lead, as without nodes) instead of failing on NOPERM."""
    import redis

    from agentteams.store.node_records import NodeOrder, NodeRecord, NodeReply
    from tests.support.redislab import recipe

    admin = redis.Redis(host="127.0.0.1", port=redis_server.port, decode_responses=True)
    admin.execute_command(*recipe("proj", "pw-proj-0123456789"), *NODE_KEYS_ACL)  # type: ignore[no-untyped-call]
    admin.execute_command(*recipe("other", "pw-other-0123456789"))  # type: ignore[no-untyped-call]

    def as_user(team: str) -> RedisStore:
        monkeypatch.setenv("AGENTTEAMS_REDIS_USER", f"team-{team}")
        monkeypatch.setenv("AGENTTEAMS_REDIS_PASSWORD", f"pw-{team}-0123456789")
        return RedisStore(parse_url(redis_server.url))

    ours = as_user("proj")
    ours.nodes.register(NodeRecord("n1", "h", 2, "0.1.0"))
    order = NodeOrder("spawn", "proj", "alice")
    ours.nodes.order("n1", order)
    assert [o.order_id for o in ours.nodes.take_orders("n1", 1.0)] == [order.order_id]
    ours.nodes.reply(NodeReply(order.order_id, True))
    assert getattr(ours.nodes.await_reply(order.order_id, 1.0), "ok", False)
    ours.teams.create("proj")  # a log is kept only while its team is there
    ours.nodes.ship_log("proj", "alice", ['{"type": "user"}'])
    assert ours.nodes.read_log("proj", "alice", "", 0.0)[0] == ['{"type": "user"}']
    assert [r.name for r in ours.nodes.live()] == ["n1"]
    other = as_user("other")
    assert other.nodes.live() == [] and other.nodes.read("n1") is None
