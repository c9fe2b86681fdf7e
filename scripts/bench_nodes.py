"""Nodes, measured in one run on the file store and on a private redis-server (AOF on): a teammate placed on an
`agentteams node` process (order -> the node's reply; order -> the teammate's first model request) against the
baseline of the same teammate started in the lead's own process (InProcessSpawner), and how long a node SIGSTOPped
stays listed (its last beat -> its record gone). Claude Code has no nodes: the baseline is our own local spawn.

    python scripts/bench_nodes.py [--spawns 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentteams.mockapi import MockServer  # noqa: E402
from agentteams.model.anthropic_client import AnthropicClient  # noqa: E402
from agentteams.model.config import ModelConfig  # noqa: E402
from agentteams.store.api import NewMember, Store  # noqa: E402
from agentteams.store.file.store import FileStore  # noqa: E402
from agentteams.store.paths import LEAD_NAME, Layout  # noqa: E402
from agentteams.store.redis.connection import parse_url  # noqa: E402
from agentteams.store.redis.store import RedisStore  # noqa: E402
from agentteams.team.nodes.spawner import NodeSpawner  # noqa: E402
from agentteams.team.spawn.base import Handle, SpawnRequest  # noqa: E402
from agentteams.team.spawn.spawners import InProcessSpawner  # noqa: E402
from tests.support.redislab import start as start_redis  # noqa: E402

KEY = "bench-key-0123456789abcdef"
SCENARIO = {"routes": [{"name": "any", "match": {}, "turns": [], "idle": "Noted."}]}


def until(cond: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise TimeoutError("the bench waited too long")
        time.sleep(0.001)


def first_request(server: MockServer, name: str, since: int) -> bool:
    return any(f"Your name is {name}" in str(r.get("body")) for r in server.arrivals[since:])


def spawn_ms(store: Store, spawner: object, server: MockServer, team: str, name: str, cwd: Path) -> tuple[float, float]:
    """(ms to the spawn call's return, ms to the teammate's first model request)."""
    store.teams.add_member(team, NewMember(name, cwd=str(cwd)))
    since = len(server.arrivals)
    req = SpawnRequest(name, team, "blue", cwd, "bench", "claude-sonnet-4-6", permission_mode="bypassPermissions")
    started = time.perf_counter()
    store.mail.send(team, name, f"You are {name}.", sender=LEAD_NAME)
    handle: Handle = spawner.spawn(req)  # type: ignore[attr-defined]
    returned = time.perf_counter()
    until(lambda: first_request(server, name, since))
    arrived = time.perf_counter()
    spawner.stop(handle)  # type: ignore[attr-defined]
    return (returned - started) * 1000, (arrived - started) * 1000


def run_store(kind: str, store: Store, env: dict[str, str], tmp: Path, spawns: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    with MockServer(SCENARIO) as server:
        env = {**env, "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": KEY}
        os.environ.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY=KEY)
        layout = Layout(Path(env["CLAUDE_CONFIG_DIR"]))
        local = InProcessSpawner(layout, AnthropicClient(ModelConfig.from_env(os.environ)), store=store)
        work = tmp / f"node-{kind}"
        work.mkdir()
        argv = [str(Path(sys.executable).with_name("agentteams")), "node", "--name", "bench", "--slots", "64",
                "--workdir", str(work), "--heartbeat", "0.25"]  # fmt: skip
        node = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            until(lambda: store.nodes.read("bench") is not None)
            team = store.teams.create(f"bench-{kind}").name
            lead = NodeSpawner(store, local)
            for i in range(spawns):
                for label, spawner in (("local", local), ("node", lead)):
                    ret, first = spawn_ms(store, spawner, server, team, f"{label}{i}", tmp)
                    out.setdefault(f"{label} spawn returns", []).append(ret)
                    out.setdefault(f"{label} first request", []).append(first)
            record = store.nodes.read("bench")
            node.send_signal(signal.SIGSTOP)
            assert record is not None
            until(lambda: store.nodes.read("bench") is None)
            out["node cut off: last beat -> gone"] = [time.time() * 1000 - record.updated_at]
        finally:
            node.send_signal(signal.SIGCONT)
            node.terminate()
            node.wait(timeout=20)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spawns", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-nodes-") as raw:
        tmp = Path(raw)
        root = tmp / "claude"
        root.mkdir()
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(root)}
        env.pop("AGENTTEAMS_STORE", None)
        os.environ.update(CLAUDE_CONFIG_DIR=str(root))
        results["file"] = run_store("file", FileStore(Layout(root)), env, tmp, args.spawns)
        (tmp / "redis").mkdir()
        server = start_redis(tmp / "redis")  # AOF on, every write fsynced
        try:
            results["redis"] = run_store("redis", RedisStore(parse_url(server.url)),
                                         {**env, "AGENTTEAMS_STORE": server.url}, tmp, args.spawns)  # fmt: skip
        finally:
            server.stop()
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print(f"{'measure (ms, median of ' + str(args.spawns) + ')':44} {'file':>10} {'redis':>10}")
    for name in results["file"]:
        cells = [f"{statistics.median(results[k][name]):10.1f}" for k in ("file", "redis")]
        print(f"{name:44} {' '.join(cells)}")


if __name__ == "__main__":
    main()
