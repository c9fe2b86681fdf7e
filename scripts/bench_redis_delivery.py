#!/usr/bin/env python
"""Delivery on the Redis store beside the file store, in one run: our teammate `bench` in a tmux pane (through a
fork server, as in `bench_team.py`'s delivery case), its team in a private redis-server (AOF `appendfsync always`)
instead of files; per message, `t0 = time.time()`, a send through the store, and the `ts` of the first model
request carrying it. The file store's figures are `bench_team.py`'s own "ours" case of the same run.

Usage: python scripts/bench_redis_delivery.py [--messages N]; `bench_team.py` runs it in the same run as its
other figures. Target (issue 18), reported and never enforced: delivery p50 on Redis <= the file store's.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_team as bt

from agentteams.backends.tmux import TmuxBackend
from agentteams.procs.fork.client import ForkServer
from agentteams.store.api import NewMember
from agentteams.store.protocol import IdleNotification, parse_message
from agentteams.store.redis.connection import parse_url
from agentteams.store.redis.store import RedisStore
from tests.support import realclaude as rc
from tests.support import redislab


def idle_notices(store: RedisStore, team: str) -> int:
    envs = store.mail.read_all(team, bt.LEAD)
    return sum(e.sender == bt.NAME and isinstance(parse_message(e.text), IdleNotification) for e in envs)


def start_teammate(world: bt.Lab, store: RedisStore, team: str, session: str) -> None:
    """`bench` in a pane beside a placeholder lead pane; the tmux server's environment names the store."""
    lead_pane = world.tmux.start(world.env, world.proj, ["cat"], session="lead")
    flags = ["--agent-id", f"{bt.NAME}@{team}", "--agent-name", bt.NAME, "--team-name", team, "--agent-color",
             "blue", "--parent-session-id", session, "--dangerously-skip-permissions", "--model", bt.MODEL]  # fmt: skip
    server = ForkServer.start(world.env)
    world.extras.callback(server.stop)
    if not server.wait_ready(bt.STEP):
        raise SystemExit(f"bench_redis_delivery: fork server not ready: {server.error}")
    env = {"CLAUDECODE": "1", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1", **server.env()}
    pane = TmuxBackend(str(world.tmux.sock)).spawn_pane(lead_pane, bt.NAME, "blue", [str(bt.AGENTTEAMS), *flags],
                                                        world.proj, env)  # fmt: skip
    store.teams.set_member_fields(team, bt.NAME, tmux_pane_id=pane)


def run(n: int, root: Path, version: str) -> bt.Delivery:
    script = {"routes": [{"name": "main", "match": {"tools": True}, "turns": [], "idle": "pong"}]}
    redis = redislab.start(root / "redis")
    try:
        with bt.lab(root / "lab", script, version) as world:
            world.env["AGENTTEAMS_STORE"] = redis.url
            store = RedisStore(parse_url(redis.url))
            session = str(uuid.uuid4())
            team = store.teams.create(bt.TEAM, lead_session_id=session, cwd=str(world.proj)).name
            store.teams.add_member(team, NewMember(name=bt.NAME, color="blue", model=bt.MODEL, prompt="bench",
                                                   cwd=str(world.proj), backend_type="tmux"))  # fmt: skip
            store.mail.send(team, bt.NAME, "warm-up WARMUP: answer briefly", sender=bt.LEAD)
            start_teammate(world, store, team, session)
            bt.first_request(world.server, lambda r: r.get("route") == "main" and "WARMUP" in str(r.get("body")),
                             "redis: the warm-up request")  # fmt: skip
            bt.await_(lambda: idle_notices(store, team) >= 1, "redis: the warm-up idle notice")
            time.sleep(bt.SETTLE)
            result = bt.Delivery("ours", [])
            for i in range(n):
                time.sleep(random.uniform(0, bt.PHASE))
                since = world.server.request_count
                t0 = time.time()
                store.mail.send(team, bt.NAME, f"ping {i} MARK{i}", sender=bt.LEAD)
                result.send_ms.append((time.time() - t0) * 1000)
                hit = bt.first_request(world.server, bt.carries(i), f"redis: the request for message {i}", since)
                result.samples_ms.append((hit["ts"] - t0) * 1000)
                bt.await_(functools.partial(lambda k: idle_notices(store, team) >= k, i + 2),
                          f"redis: the idle notice after message {i}")  # fmt: skip
            return result
    finally:
        redis.stop()


def measure(messages: int, root: Path, version: str) -> bt.Delivery | None:
    """The Redis case; None (said on stderr) without a redis-server to run."""
    if shutil.which("redis-server") is None:
        print("delivery on the Redis store: skipped, no redis-server", file=sys.stderr, flush=True)
        return None
    print("delivery: ours on the Redis store ...", file=sys.stderr, flush=True)
    return run(messages, root / "redis-delivery", version)


def as_json(redis: bt.Delivery | None) -> dict[str, object] | None:
    return None if redis is None else {**asdict(bt.stats(redis.samples_ms)), **asdict(redis)}


def print_rows(redis: bt.Delivery | None, files: bt.Delivery) -> None:
    if redis is None:
        return
    print("\nour teammate's delivery with its team on a Redis server, beside the file store's (same run)")
    r, f = bt.stats(redis.samples_ms), bt.stats(files.samples_ms)
    met = "MET" if r.p50_ms <= f.p50_ms else "MISSED"
    print(f"{'figure':<44}{'file store':>11}{'redis':>9}  note")
    print(f"{f'delivery p50, ms ({r.n} messages)':<44}{f.p50_ms:>11.2f}{r.p50_ms:>9.2f}  redis <= file: {met}")
    print(f"{'delivery p99, ms':<44}{f.p99_ms:>11.2f}{r.p99_ms:>9.2f}")
    sends = (statistics.median(files.send_ms), statistics.median(redis.send_ms))
    print(f"{'of which the send until it returned, p50 ms':<44}{sends[0]:>11.2f}{sends[1]:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--claude-version", choices=rc.VERSIONS, default=rc.DEFAULT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-redis-delivery-") as tmp:
        files = bt.run_delivery("ours", args.messages, Path(tmp) / "files", args.claude_version)
        redis = run(args.messages, Path(tmp) / "redis-delivery", args.claude_version)
    print(f"load average {os.getloadavg()[0]:.1f}")
    print_rows(redis, files)


if __name__ == "__main__":
    main()
