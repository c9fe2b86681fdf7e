"""Messages between sessions of ours on two machines through the Redis store (issue 31, item 2), as real processes
against the scripted server and a private redis-server: each session has its own config root and host name, so
neither can see the other's record or socket, and only the store joins them (both ways: notices come back)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.redis.connection import connect, parse_url
from agentteams.store.redis.peers import INDEX_KEY, RedisPeers
from tests.support.cli import Cli
from tests.support.headless import KEY
from tests.support.peer_script import carrying, last_user, list_agents, routes, say, send
from tests.support.redislab import RedisServer
from tests.support.stream_json import STREAM_ARGS
from tests.support.wait import wait_until

pytestmark = pytest.mark.proc


def _session(cli: Cli, root: Path, cwd: Path, url: str, redis: RedisServer, name: str) -> subprocess.Popen[str]:
    """A session on host `<name>-host`, with a config root of its own (its machine's)."""
    root.mkdir(exist_ok=True)
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": url, "AGENTTEAMS_NO_WARM": "1"}
    env.update(CLAUDE_CONFIG_DIR=str(root), AGENTTEAMS_STORE=redis.url, AGENTTEAMS_HOST=f"{name}-host")
    return cli.popen(*STREAM_ARGS, "--dangerously-skip-permissions", "-n", name, env=env, cwd=cwd,
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def _in_store(peers: RedisPeers, name: str) -> dict[str, Any] | None:
    return next((r for r in peers.live() if r.get("name") == name), None)


def _end(*procs: subprocess.Popen[str]) -> None:
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
    for proc in procs:
        proc.wait(timeout=30)


def test_a_message_reaches_a_session_on_another_machine(
    cli: Cli, work: Path, tmp_path: Path, redis_server: RedisServer
) -> None:  # fmt: skip
    peers = RedisPeers(connect(parse_url(redis_server.url)))
    ask = send("rcv", "PEERMARK over the store")
    ask["content"][0]["input"]["notify_when_idle"] = True
    idle = {"wait_for": "Cross-session idle notice", "text": "snd heard rcv is idle."}
    script = routes(["rcv read it."], [list_agents(), ask, "snd sent.", idle])
    with MockServer(script) as server:
        rcv = _session(cli, tmp_path / "machine-r", work, server.base_url, redis_server, "rcv")
        wait_until(lambda: _in_store(peers, "rcv") is not None, 30, "the receiver's record in the store")
        record = _in_store(peers, "rcv") or {}
        assert record["agentteamsHost"] == "rcv-host" and record["agentteams"] == 1
        snd = _session(cli, tmp_path / "machine-s", work, server.base_url, redis_server, "snd")
        say(snd, "SENDTO rcv")
        wait_until(lambda: bool(carrying(server, "PEERMARK over the store")), 30, "the message in rcv's request")
        got = last_user(carrying(server, "PEERMARK over the store")[0])
        assert '<cross-session-message from="redis:' in got and 'from-name="snd" from-mode="bypass"' in got
        assert "another machine (snd-host)" in got
        listed = [last_user(r) for r in server.requests if "Peer sessions (1)" in last_user(r)]
        assert listed and "rcv [" in listed[0] and "on rcv-host" in listed[0], listed
        wait_until(lambda: any('"success":true' in last_user(r) for r in server.requests), 30, "the send's result")
        assert not (tmp_path / "machine-s" / "sessions" / f"{record['pid']}.json").exists()  # no local sight
        wait_until(lambda: bool(carrying(server, "[Cross-session idle notice]")), 30, "rcv's idle notice to snd")
        notice = last_user(carrying(server, "[Cross-session idle notice]")[0])
        assert "rcv, which you asked to hear about, is idle" in notice
        _end(rcv, snd)
        assert _in_store(peers, "rcv") is None and _in_store(peers, "snd") is None, "an ended session leaves"
        assert not peers.client.keys("at:peer*"), "nothing of either is left in the store"


def test_a_refusing_session_on_another_machine_tells_the_sender(
    cli: Cli, work: Path, tmp_path: Path, redis_server: RedisServer
) -> None:  # fmt: skip
    peers = RedisPeers(connect(parse_url(redis_server.url)))
    refusing = tmp_path / "refusing"
    (refusing / ".claude").mkdir(parents=True)
    (refusing / ".claude" / "settings.json").write_text(json.dumps({"crossSessionInbound": "refuse"}))
    notice = {"wait_for": "Cross-session delivery notice", "text": "snd heard the refusal."}
    script = routes(["rcv read it."], [send("rcv", "PEERMARK refused"), "snd sent.", notice])
    with MockServer(script) as server:
        rcv = _session(cli, tmp_path / "machine-r", refusing, server.base_url, redis_server, "rcv")
        wait_until(lambda: _in_store(peers, "rcv") is not None, 30, "the receiver's record in the store")
        snd = _session(cli, tmp_path / "machine-s", work, server.base_url, redis_server, "snd")
        say(snd, "SENDTO rcv")
        wait_until(lambda: bool(carrying(server, "[Cross-session delivery notice]")), 30, "the sender told")
        assert "refused" in last_user(carrying(server, "[Cross-session delivery notice]")[0])
        assert not any("PEERMARK refused" in last_user(r) and "cross-session-message" in last_user(r)
                       for r in server.requests), "the refused message never reaches the receiver's model"  # fmt: skip
        _end(rcv, snd)


def test_a_dead_sessions_record_expires(cli: Cli, work: Path, tmp_path: Path, redis_server: RedisServer) -> None:
    peers = RedisPeers(connect(parse_url(redis_server.url)))
    with MockServer(routes(["rcv read it."], ["snd sent."])) as server:
        rcv = _session(cli, tmp_path / "machine-r", work, server.base_url, redis_server, "rcv")
        wait_until(lambda: _in_store(peers, "rcv") is not None, 30, "the receiver's record in the store")
        sid = (_in_store(peers, "rcv") or {})["sessionId"]
        key = f"at:peer:{sid}"
        wait_until(lambda: peers.client.pttl(key) < 8000, 30, "the lease running down")  # fmt: skip
        wait_until(lambda: peers.client.pttl(key) > 9000, 30, "the lease renewed while the session runs")
        rcv.kill()  # no close: only the lease ends it
        rcv.wait(timeout=10)
        assert _in_store(peers, "rcv") is not None, "a killed session's record stays until its lease ends"
        wait_until(lambda: _in_store(peers, "rcv") is None, 30, "the dead session's record gone from the listing")
        # its key ends a moment after its index entry: the entry's end is reckoned before the key's write (by as
        # much as the renewal was held up between the two, long on a loaded machine), the key's from the write on
        wait_until(lambda: not peers.client.exists(key), 10, "the dead session's record gone from the store")
        peers.publish("other", {"pid": 1}, 1000)  # any session's renewal drops the index's dead entries
        assert peers.client.zscore(INDEX_KEY, sid) is None
