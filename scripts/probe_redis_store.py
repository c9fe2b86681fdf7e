"""A quick probe of the Redis store beside the file store, in the same run (the full benchmarks join
bench_store.py and bench_team.py with the nodes): wake latency (send -> the recipient's waiter returns) and an
8-process claim race (every task claimed exactly once; per-claim latency). Starts a private redis-server (AOF on).

    python scripts/probe_redis_store.py [--wakes 200] [--tasks 200] [--procs 8] [--fsync everysec]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentteams.store.api import NewMember, Store  # noqa: E402
from agentteams.store.file.store import FileStore  # noqa: E402
from agentteams.store.opener import open_store  # noqa: E402
from agentteams.store.paths import Layout  # noqa: E402
from agentteams.store.redis.connection import parse_url  # noqa: E402
from agentteams.store.redis.store import RedisStore  # noqa: E402


def start_redis(workdir: Path, fsync: str) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    binary = shutil.which("redis-server") or sys.exit("redis-server is not installed")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir), "--appendonly", "yes",
         "--appendfsync", fsync, "--save", "", "--logfile", str(workdir / "redis.log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 20
    while True:
        try:
            RedisStore(parse_url(url))
            return proc, url
        except Exception:
            if time.monotonic() > deadline:
                proc.kill()
                raise
            time.sleep(0.02)


def wake_ms(store: Store, rounds: int) -> list[float]:
    """Per round: a waiter blocks on bob's inbox; the time from just before the send until it returns."""
    team = store.teams.create("wake").name
    store.teams.add_member(team, NewMember("bob", cwd="/tmp"))
    out: list[float] = []
    with store.watch(team, "bob") as waiter:
        for i in range(rounds):
            sent = [0.0]

            def send(i: int = i, sent: list[float] = sent) -> None:
                time.sleep(0.002)  # the waiter is blocked by then
                sent[0] = time.perf_counter()
                store.mail.send(team, "bob", f"m{i}", sender="team-lead")

            t = threading.Thread(target=send)
            t.start()
            while not sent[0] or not store.mail.unread(team, "bob"):  # a wake-up for the send, not an earlier write
                if not waiter.wait(10):
                    raise SystemExit("a wake-up never came")
            out.append((time.perf_counter() - sent[0]) * 1000)
            t.join()
            store.mail.mark_delivered(team, "bob", store.mail.unread(team, "bob"))
            while waiter.wait(0.05):  # the writes of this round (spool, inbox, delivery) wake no later round
                pass
    return out


def claim_race(env: dict[str, str], tasks: int, procs: int) -> tuple[int, int, float, float]:
    """`procs` processes claim `tasks` tasks: (claims won, distinct tasks, wall s, per-claim p50 ms)."""
    store = open_store_with(env)
    team = store.teams.create("race").name
    for i in range(tasks):
        store.tasks.create(team, f"t{i}")
    go = Path(tempfile.mkdtemp()) / "go"
    children = [subprocess.Popen(claimer_argv(n, go), env=env, stdout=subprocess.PIPE, text=True) for n in range(procs)]
    time.sleep(1.0)  # the children import and warm up
    start = time.perf_counter()
    go.touch()
    outs = [c.communicate(timeout=300)[0] for c in children]
    wall = time.perf_counter() - start
    won = [line.split() for out in outs for line in out.splitlines() if line.startswith("won ")]
    lat = [float(w[2]) for w in won]
    return len(won), len({w[1] for w in won}), wall, statistics.median(lat) if lat else 0.0


def claimer_argv(n: int, go: Path) -> list[str]:
    return [sys.executable, __file__, "--claimer", f"a{n}", str(go)]


def open_store_with(env: dict[str, str]) -> Store:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        return open_store()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def claimer(agent: str, go: str) -> None:
    store = open_store()
    store.tasks.list_tasks("race")
    while not os.path.exists(go):
        time.sleep(0.001)
    while True:
        t0 = time.perf_counter()
        result = store.tasks.claim_next("race", agent)
        if not result.success or result.task is None:
            return
        print(f"won {result.task.id} {(time.perf_counter() - t0) * 1000:.3f}", flush=True)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--claimer":
        claimer(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--wakes", type=int, default=200)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--fsync", default="everysec", choices=["always", "everysec", "no"])
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="probe-redis-"))
    server, url = start_redis(work, a.fsync)
    try:
        rows = []
        for kind in ("file", "redis"):
            root = work / f"cfg-{kind}"
            root.mkdir()
            env = {**os.environ, "CLAUDE_CONFIG_DIR": str(root), "PYTHONPATH": str(ROOT)}
            env.pop("AGENTTEAMS_STORE", None)
            if kind == "redis":
                env["AGENTTEAMS_STORE"] = url
                subprocess.run(["redis-cli", "-u", url, "flushdb"], check=False, capture_output=True)
            store: Store = RedisStore(parse_url(url)) if kind == "redis" else FileStore(Layout(root))
            wakes = wake_ms(store, a.wakes)
            won, distinct, wall, claim_p50 = claim_race(env, a.tasks, a.procs)
            rows.append((kind, pct(wakes, 0.5), pct(wakes, 0.99), won, distinct, a.tasks, wall, claim_p50))
        print(f"load average {os.getloadavg()[0]:.2f}; redis AOF appendfsync {a.fsync}; {a.procs} claiming processes")
        print(f"{'store':<6} {'wake p50':>9} {'wake p99':>9} {'claims':>7} {'distinct':>9} {'tasks':>6} "
              f"{'race s':>7} {'claim p50':>10}")  # fmt: skip
        for kind, p50, p99, won, distinct, tasks, wall, cp50 in rows:
            print(
                f"{kind:<6} {p50:>7.2f}ms {p99:>7.2f}ms {won:>7} {distinct:>9} {tasks:>6} {wall:>7.2f} {cp50:>8.2f}ms"
            )
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
