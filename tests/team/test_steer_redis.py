"""Delivery on the Redis store, end to end: a message to a busy teammate stays pending in its inbox stream's
consumer group (read, never acknowledged) until the model request carrying it was answered, and one whose reader was
killed before that comes again to the next reader (the teammate's successor) rather than being lost."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.redis.connection import GROUP, Keys, parse_url
from agentteams.store.redis.store import RedisStore
from tests.support.cli import Cli
from tests.support.procs import pid_alive
from tests.support.redislab import RedisServer
from tests.support.steering import STEER, arrivals_on, release, scenario
from tests.support.team_run import finish, lead_env, lead_in_tmux
from tests.support.team_script import TEAM
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until


def read_mark(store: RedisStore) -> bool | None:
    """alice's copy of the message in Redis: None before it is there, then whether it was acknowledged."""
    found = [e for e in store.mail.read_live(TEAM, "alice") if STEER in e.text]
    return found[0].read if found else None


def pending(store: RedisStore) -> int:
    """Entries alice read from her inbox stream but never acknowledged (XPENDING)."""
    stream = Keys(TEAM).inbox("alice")
    if not store.client.exists(stream) or not store.client.xinfo_groups(stream):
        return 0
    return int(store.client.xpending(stream, GROUP)["pending"])


def start(tmux: Tmux, cli: Cli, config_root: Path, tmp: Path, server: MockServer, redis: RedisServer,
          mode: str) -> tuple[RedisStore, Path, Path]:  # fmt: skip
    work, gates = tmp / "work", tmp / "gates"
    work.mkdir()
    gates.mkdir()
    for name in ("alice-2", "alice-3", "lead"):
        os.mkfifo(gates / name)
    env = {**lead_env(config_root, server), "AGENTTEAMS_STORE": redis.url}
    _pane, rc = lead_in_tmux(tmux, cli, env, work, tmp, "--teammate-mode", mode)
    store = RedisStore(parse_url(redis.url))
    wait_until(lambda: arrivals_on(server, "alice") >= 2, 60, "alice to reach her 2nd call")
    release(gates / "lead")  # the lead's model now sends the message, while alice's 2nd call runs
    wait_until(lambda: read_mark(store) is not None, 30, "the message in alice's inbox stream")
    return store, gates, rc


@pytest.mark.parametrize("mode", ["tmux", "in-process"])
def test_acknowledged_only_once_a_model_request_carried_it(
    cli: Cli, config_root: Path, tmp_path: Path, tmux: Tmux, redis_server: RedisServer, mode: str
) -> None:
    with MockServer(scenario(tmp_path / "gates")) as server:
        store, gates, rc = start(tmux, cli, config_root, tmp_path, server, redis_server, mode)
        assert read_mark(store) is False, "acknowledged while no request has carried it"
        assert arrivals_on(server, "alice") == 2, "alice is still inside her 2nd call"
        release(gates / "alice-2")
        release(gates / "alice-3")  # alice is in her 3rd call: the request that carried the message was answered
        assert read_mark(store) is True, "acknowledged once the request carrying it was answered"
        assert pending(store) == 0
        run = finish(rc, tmp_path, server, timeout=90)
    assert run.rc == 0, run.err
    bodies = [r["body"] for r in server.requests if r.get("route") == "alice"]
    carrying = [i for i, b in enumerate(bodies) if STEER in json.dumps(b["messages"][-1])]
    assert carrying == [2], "the 3rd request of the turn carries it as its newest content"


def held_third_answer(gates: Path) -> dict[str, Any]:
    """The steer scenario with the answer to alice's 3rd request (the one carrying the message) held a minute."""
    script = scenario(gates)
    alice = next(r for r in script["routes"] if r["name"] == "alice")
    alice["turns"][2] = {**alice["turns"][2], "delay_ms": 60000}
    return script


def test_a_message_read_by_a_killed_teammate_comes_again(
    cli: Cli, config_root: Path, tmp_path: Path, tmux: Tmux, redis_server: RedisServer
) -> None:
    with MockServer(held_third_answer(tmp_path / "gates")) as server:
        store, gates, _rc = start(tmux, cli, config_root, tmp_path, server, redis_server, "tmux")
        release(gates / "alice-2")  # she reads the message and sends the request carrying it: its answer is held
        wait_until(lambda: pending(store) == 1, 10, "alice to take the message into her pending list")
        wait_until(lambda: any(STEER in json.dumps(a.get("body")) for a in server.arrivals), 10, "the request")
        alice = store.presence.read(TEAM, "alice")
        assert alice is not None
        os.kill(alice.pid, signal.SIGKILL)  # the request carrying the message was never answered
        wait_until(lambda: not pid_alive(alice.pid), 10, "alice to die")
        assert read_mark(store) is False and pending(store) == 1, "lost or acknowledged with its reader"
        successor = RedisStore(parse_url(redis_server.url))  # alice's successor reads her inbox afresh
        assert [e.text for e in successor.mail.unread(TEAM, "alice") if STEER in e.text] == [STEER]
