"""Section e of bench_store.py: the Redis store beside the file store, both through the store interface, in the
same run: 8 writer processes sending into one inbox (messages/s, lost, duplicated), and 8 processes claiming a list
of tasks (claims/s, per-claim latency p50/p99, tasks claimed twice or never). A private redis-server with AOF
`appendfsync always` (every acknowledged write on disk, the guarantee the fault tests check) serves the Redis side.

Worker processes run this file: `bench_store_redis.py _send WRITER COUNT GO` or `_claim AGENT GO`."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentteams.store.api import NewMember, Store  # noqa: E402
from agentteams.store.opener import open_store  # noqa: E402

TEAM = "bench"
AGENT = "alice"
TEXT = "Please pick up the next task in the list, run the tests for the module you touched, and report back."
DEADLINE = 600.0


@dataclass
class StoreRow:
    store: str
    procs: int
    sends: int = 0
    send_wall_s: float = 0.0
    send_lost: int = 0
    send_duplicated: int = 0
    tasks: int = 0
    claims: int = 0
    claim_wall_s: float = 0.0
    claim_p50_ms: float = 0.0
    claim_p99_ms: float = 0.0
    claimed_twice: int = 0
    never_claimed: int = 0

    @property
    def sends_per_s(self) -> float:
        return self.sends / self.send_wall_s if self.send_wall_s else 0.0

    @property
    def claims_per_s(self) -> float:
        return self.claims / self.claim_wall_s if self.claim_wall_s else 0.0


def _wait_go(go: str) -> None:
    end = time.monotonic() + DEADLINE
    while not os.path.exists(go):
        if time.monotonic() > end:
            sys.exit("no go")
        time.sleep(0.0005)


def sender(writer: int, count: int, go: str) -> None:
    store = open_store()
    store.teams.read(TEAM)  # connected and warm before the start
    print("ready", flush=True)
    _wait_go(go)
    for i in range(count):
        store.mail.send(TEAM, AGENT, f"{writer}:{i} {TEXT}", sender="team-lead")
    print(f"done {time.time():.6f}", flush=True)


def claimer(agent: str, go: str) -> None:
    store = open_store()
    store.tasks.list_tasks(TEAM)
    print("ready", flush=True)
    _wait_go(go)
    while True:
        t0 = time.perf_counter()
        result = store.tasks.claim_next(TEAM, agent)
        if not result.success or result.task is None:
            print(f"done {time.time():.6f}", flush=True)
            return
        print(f"won {result.task.id} {(time.perf_counter() - t0) * 1000:.3f}", flush=True)


def _race(env: dict[str, str], argvs: list[list[str]]) -> tuple[float, list[str]]:
    """Start the workers, wait until each is ready, release them together; (wall seconds, their output). The wall
    ends when the last worker finished its work (its `done` line), not when it exited: eight interpreters tearing
    down took ~0.1 s, a fifth of the Redis side's whole send phase and a twentieth of the file store's."""
    go = Path(tempfile.mkdtemp(prefix="bench-go-")) / "go"
    procs = [subprocess.Popen([sys.executable, __file__, *a, str(go)], env=env, stdout=subprocess.PIPE, text=True)
             for a in argvs]  # fmt: skip
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready", "a worker failed to start"
    start = time.time()
    go.touch()
    outs = [p.communicate(timeout=DEADLINE)[0] for p in procs]
    wall = max(float(line.split()[1]) for out in outs for line in out.splitlines() if line.startswith("done ")) - start
    shutil.rmtree(go.parent, ignore_errors=True)
    if any(p.returncode for p in procs):
        raise SystemExit("a worker failed")
    return wall, outs


def measure(kind: str, store: Store, env: dict[str, str], procs: int, per_writer: int, tasks: int) -> StoreRow:
    row = StoreRow(kind, procs, sends=procs * per_writer, tasks=tasks)
    team = store.teams.create(TEAM).name
    store.teams.add_member(team, NewMember(name=AGENT, cwd="/"))
    row.send_wall_s, _ = _race(env, [["_send", str(w), str(per_writer)] for w in range(procs)])
    texts = [e.text.split(" ", 1)[0] for e in store.mail.read_all(team, AGENT)]
    row.send_duplicated = len(texts) - len(set(texts))
    row.send_lost = row.sends - len(set(texts))
    for i in range(tasks):
        store.tasks.create(team, f"t{i}")
    row.claim_wall_s, outs = _race(env, [["_claim", f"c{n}"] for n in range(procs)])
    won = [line.split() for out in outs for line in out.splitlines() if line.startswith("won ")]
    ids = [w[1] for w in won]
    lat = sorted(float(w[2]) for w in won)
    row.claims, row.claimed_twice, row.never_claimed = len(won), len(ids) - len(set(ids)), tasks - len(set(ids))
    if lat:
        row.claim_p50_ms = statistics.median(lat)
        row.claim_p99_ms = lat[min(len(lat) - 1, int(0.99 * len(lat)))]
    return row


def run(procs: int, per_writer: int, tasks: int) -> list[StoreRow] | str:
    """Both stores measured now; a string (why not) when no redis-server is installed."""
    from agentteams.store.paths import Layout
    from agentteams.store.redis.connection import parse_url
    from agentteams.store.redis.store import RedisStore
    from tests.support import redislab

    if shutil.which("redis-server") is None:
        return "skipped: redis-server is not installed"
    work = Path(tempfile.mkdtemp(prefix="bench-redis-"))
    server = redislab.start(work / "redis")
    try:
        rows = []
        for kind in ("file", "redis"):
            env = {**os.environ, "CLAUDE_CONFIG_DIR": str(work / f"cfg-{kind}"), "PYTHONPATH": str(ROOT)}
            env["AGENTTEAMS_STORE"] = server.url if kind == "redis" else "file"
            store: Store = RedisStore(parse_url(server.url)) if kind == "redis" else _file_store(Layout, env)
            rows.append(measure(kind, store, env, procs, per_writer, tasks))
        return rows
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


def _file_store(layout_type: type, env: dict[str, str]) -> Store:
    from agentteams.store.file.store import FileStore

    root = Path(env["CLAUDE_CONFIG_DIR"])
    root.mkdir(parents=True)
    return FileStore(layout_type(root))


def as_json(rows: list[StoreRow]) -> list[dict[str, float | int | str]]:
    return [{**r.__dict__, "sends_per_s": r.sends_per_s, "claims_per_s": r.claims_per_s} for r in rows]


def main(argv: list[str]) -> None:
    if argv[:1] == ["_send"]:
        sender(int(argv[1]), int(argv[2]), argv[3])
    elif argv[:1] == ["_claim"]:
        claimer(argv[1], argv[2])
    else:
        print(json.dumps(as_json(r) if isinstance(r := run(8, 200, 200), list) else r, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
