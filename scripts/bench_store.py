#!/usr/bin/env python
"""Benchmark the mailbox store against Claude Code's own inbox algorithm, in one run.

The baseline is `tests/support/ccref.py`: the real CLI's writer exactly (mkdir lock, 10 retries backing
off 5-100 ms, read-parse-append-rewrite). A baseline send that runs out of retries raises
`ccref.LockFailed`: its message is lost.

Sections:
  a. uncontended send latency p50/p99;
  b. messages/s with 1, 4 and 8 writer processes (released together through a go-file) into one fresh
     inbox, with the messages lost (expected minus present in the final, valid-JSON file) and failed sends;
  c. the cost of one send (median) into an inbox that has received N messages over its life, read by its
     reader; plus an informational row for ours with N *unread* messages (no reader: the worst case);
  d. the targets, PASS/FAIL;
  e. the Redis store beside the file store (scripts/bench_store_redis.py): 8 writers' send throughput and 8
     processes' claims (latency, throughput), lost and duplicated counted (its targets join d).

Usage: python scripts/bench_store.py [--quick] [--json PATH] [--check] [--build {send,direct}]
Exit status is 0 (it is a report) unless --check is given and a target is missed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentteams.store.api import new_envelope  # noqa: E402
from agentteams.store.file.mailbox import KEEP_DELIVERED, Mailbox  # noqa: E402
from agentteams.store.file.teams import NewMember, TeamStore  # noqa: E402
from agentteams.store.fs import locking  # noqa: E402
from agentteams.store.fs.atomic_json import dump_compact, dump_json, encode  # noqa: E402
from agentteams.store.paths import Layout  # noqa: E402
from tests.support import ccref  # noqa: E402

Impl = Literal["ours", "baseline"]
IMPLS: tuple[Impl, ...] = ("ours", "baseline")
TEAM = "bench"
AGENT = "alice"
SENDER = "team-lead"
FILLER = (
    "Please pick up the next task in the list, run the tests for the module you touched, and report back "
    "with a short summary of what changed."
)
READER_EVERY = 10  # latency case: a reader takes delivery after this many sends (untimed)
BUILD_BATCH = 100  # append-cost case: the reader marks delivered after this many sends while building
GO_POLL = 0.0005
READY_DEADLINE = 120.0
GO_DEADLINE = 120.0
RUN_DEADLINE = 900.0


def text_for(writer: int, i: int) -> str:
    return f"message {i} from writer {writer}: {FILLER}"


# -- setup ------------------------------------------------------------------------------------------


@dataclass
class Case:
    """One fresh config root holding team `bench` with member `alice`."""

    root: Path
    layout: Layout
    mailbox: Mailbox
    team: str

    @property
    def inbox(self) -> Path:
        return self.layout.inbox_file(self.team, AGENT)

    @property
    def history(self) -> Path:
        return self.layout.history_file(self.team, AGENT)


@contextmanager
def fresh_case() -> Iterator[Case]:
    root = Path(tempfile.mkdtemp(prefix="bench-store-"))
    old = os.environ.get("CLAUDE_CONFIG_DIR")
    os.environ["CLAUDE_CONFIG_DIR"] = str(root)
    try:
        layout = Layout(root)
        teams = TeamStore(layout)
        config = teams.create(TEAM, description="bench_store")
        teams.add_member(config.name, NewMember(name=AGENT))
        yield Case(root, layout, Mailbox(layout, teams), config.name)
    finally:
        if old is None:
            os.environ.pop("CLAUDE_CONFIG_DIR", None)
        else:
            os.environ["CLAUDE_CONFIG_DIR"] = old
        shutil.rmtree(root, ignore_errors=True)


def sender_for(impl: Impl, case: Case) -> Callable[[str], None]:
    if impl == "ours":
        mb, team = case.mailbox, case.team

        def send_ours(text: str) -> None:
            mb.send(team, AGENT, text, sender=SENDER)

        return send_ours
    inbox = case.inbox

    def send_baseline(text: str) -> None:
        ccref.send(inbox, SENDER, text)

    return send_baseline


def reader_for(impl: Impl, case: Case) -> Callable[[], None]:
    """Take delivery of every unread message: ours marks them delivered, the baseline CLI prunes them."""
    if impl == "ours":
        mb, team = case.mailbox, case.team

        def read_ours() -> None:
            mb.mark_delivered(team, AGENT, mb.unread(team, AGENT))

        return read_ours
    inbox = case.inbox

    def read_baseline() -> None:
        ccref.prune_delivered(inbox)

    return read_baseline


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


# -- a. uncontended latency -------------------------------------------------------------------------


@dataclass
class LatencyResult:
    impl: str
    sends: int
    p50_ms: float
    p99_ms: float
    mean_ms: float


def bench_latency(impl: Impl, sends: int) -> LatencyResult:
    with fresh_case() as case:
        send, read = sender_for(impl, case), reader_for(impl, case)
        for i in range(5):  # warm-up: lazy imports, first file creation
            send(text_for(0, -i))
        read()
        times: list[float] = []
        for i in range(sends):
            text = text_for(0, i)
            t0 = time.perf_counter()
            send(text)
            times.append(time.perf_counter() - t0)
            if i % READER_EVERY == READER_EVERY - 1:
                read()
    ms = [t * 1000 for t in times]
    return LatencyResult(impl, sends, percentile(ms, 50), percentile(ms, 99), statistics.fmean(ms))


def _best_ms(sends: int, step: Callable[[], None]) -> float:
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(sends):
            step()
        best = min(best, (time.perf_counter() - t0) / sends * 1000)
    return best


def bench_lock_checks(sends: int) -> float:
    """Milliseconds per uncontended send of what makes a broken lock safe: the held lock dir pinned (open, fstat,
    close), four ownership checks (spool take, inbox rename, in-flight unlink, release: a stat each), and the
    spool taken by link + unlink rather than a rename (timed as the difference); the calls a send adds, alone."""
    from agentteams.store.fs.locking import FileLock

    with fresh_case() as case:
        target, spool, taken = case.root / "target.json", case.root / "spool", case.root / "taken"
        target.write_bytes(b"[]")
        lock = FileLock(target)
        lock.acquire()

        def checks() -> None:
            fd = os.open(lock.lock_dir, os.O_RDONLY | os.O_DIRECTORY)
            os.fstat(fd)
            os.close(fd)
            for _ in range(4):
                lock.ensure_held()

        def take(by_link: bool) -> None:
            spool.touch()
            if by_link:
                os.link(spool, taken)
                os.unlink(spool)
            else:
                os.rename(spool, taken)
            os.unlink(taken)

        try:
            pinned = _best_ms(sends, checks)
            linked = _best_ms(sends, lambda: take(True)) - _best_ms(sends, lambda: take(False))
        finally:
            lock.release()
    return pinned + max(0.0, linked)


# -- b. throughput with writer processes ------------------------------------------------------------


@dataclass
class WriterReport:
    ok: int
    failed: int
    start: float
    end: float
    errors: list[str]


def writer_main(argv: list[str]) -> int:
    """Child: wait for the go-file, send `count` messages, write a WriterReport as JSON."""
    impl, root_s, index_s, count_s, ready_s, go_s, out_s = argv
    root, index, count = Path(root_s), int(index_s), int(count_s)
    os.environ["CLAUDE_CONFIG_DIR"] = str(root)
    layout = Layout(root)
    mb = Mailbox(layout)
    team = mb.teams.canonical(TEAM)
    inbox = layout.inbox_file(team, AGENT)
    locking._portalocker()  # warm the lazy import so it is not timed
    mb.teams.read(team)
    Path(ready_s).touch()
    go, deadline = Path(go_s), time.monotonic() + GO_DEADLINE
    while not go.exists():
        if time.monotonic() > deadline:
            print("writer: no go-file before the deadline", file=sys.stderr)
            return 2
        time.sleep(GO_POLL)
    ok = failed = 0
    errors: list[str] = []
    start = time.monotonic()
    for i in range(count):
        text = text_for(index, i)
        try:
            if impl == "ours":
                mb.send(team, AGENT, text, sender=f"writer-{index}")
            else:
                ccref.send(inbox, f"writer-{index}", text)
            ok += 1
        except ccref.LockFailed as e:
            failed += 1
            if len(errors) < 3:
                errors.append(f"LockFailed: {e}")
        except Exception as e:
            failed += 1
            if len(errors) < 3:
                errors.append(f"{type(e).__name__}: {e}")
    end = time.monotonic()
    Path(out_s).write_text(json.dumps(asdict(WriterReport(ok, failed, start, end, errors))))
    return 0


@dataclass
class ThroughputResult:
    impl: str
    writers: int
    per_writer: int
    expected: int
    seconds: float
    msgs_per_s: float
    present: int
    lost: int
    failed: int
    valid_json: bool
    duplicates: int
    leftovers: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def count_inbox(inbox: Path) -> tuple[bool, int, int]:
    """(valid JSON array, distinct messages present, duplicates)."""
    try:
        data = json.loads(inbox.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False, 0, 0
    if not isinstance(data, list):
        return False, 0, 0
    ids = [m.get("msg_id") if isinstance(m, dict) else None for m in data]
    distinct = len({i for i in ids if i is not None}) + sum(1 for i in ids if i is None)
    return True, distinct, len(ids) - distinct


def leftovers(case: Case) -> list[str]:
    """Anything a finished run should not leave behind: a lock dir, spooled messages, temp files."""
    found: list[str] = []
    inbox_dir = case.inbox.parent
    for p in sorted(inbox_dir.iterdir()):
        if p.name.endswith(".lock") or ".tmp." in p.name:
            found.append(p.name)
        elif p.name.endswith(".spool") and p.read_bytes().strip():
            found.append(f"{p.name} ({len(p.read_bytes().strip().splitlines())} lines)")
    return found


def bench_throughput(impl: Impl, writers: int, per_writer: int) -> ThroughputResult:
    with fresh_case() as case:
        work = case.root / "bench-run"
        work.mkdir()
        go = work / "go"
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        env["CLAUDE_CONFIG_DIR"] = str(case.root)
        procs: list[subprocess.Popen[bytes]] = []
        logs = []
        try:
            for w in range(writers):
                log = open(work / f"stderr-{w}", "wb")  # noqa: SIM115 - closed below
                logs.append(log)
                cmd = [
                    sys.executable, str(Path(__file__).resolve()), "_writer", impl, str(case.root), str(w),
                    str(per_writer), str(work / f"ready-{w}"), str(go), str(work / f"out-{w}.json"),
                ]  # fmt: skip
                procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log))
            deadline = time.monotonic() + READY_DEADLINE
            while not all((work / f"ready-{w}").exists() for w in range(writers)):
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    raise RuntimeError(f"{impl}: writers did not all get ready")
                time.sleep(0.005)
            go_at = time.monotonic()
            go.touch()
            for p in procs:
                p.wait(timeout=RUN_DEADLINE)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            for log in logs:
                log.close()
        reports: list[WriterReport] = []
        errors: list[str] = []
        for w, p in enumerate(procs):
            out = work / f"out-{w}.json"
            if p.returncode != 0 or not out.exists():
                tail = (work / f"stderr-{w}").read_text(errors="replace")[-400:]
                errors.append(f"writer {w} exited {p.returncode}: {tail}")
                continue
            reports.append(WriterReport(**json.loads(out.read_text())))
        for r in reports:
            errors.extend(r.errors)
        expected = writers * per_writer
        ok = sum(r.ok for r in reports)
        failed = sum(r.failed for r in reports) + (writers - len(reports)) * per_writer
        seconds = max(r.end for r in reports) - go_at if reports else float("nan")
        valid, present, dups = count_inbox(case.inbox)
        return ThroughputResult(
            impl=impl, writers=writers, per_writer=per_writer, expected=expected, seconds=seconds,
            msgs_per_s=ok / seconds if seconds > 0 else 0.0, present=present, lost=expected - present,
            failed=failed, valid_json=valid, duplicates=dups, leftovers=leftovers(case), errors=errors[:5],
        )  # fmt: skip


# -- c. append cost by inbox size -------------------------------------------------------------------


@dataclass
class AppendResult:
    impl: str
    kind: str  # "delivered" (a reader took delivery) or "unread" (no reader)
    size: int
    median_ms: float
    build: str
    live_messages: int
    history_messages: int


def _envelope_json(i: int, *, read: bool) -> dict[str, Any]:
    env = new_envelope(SENDER, text_for(0, i))
    env.read = read
    return env.to_json()


def build_ours_delivered(case: Case, size: int, how: str) -> None:
    """An inbox that has received `size` messages, all marked delivered by its reader."""
    mb, team = case.mailbox, case.team
    if how == "send":
        for i in range(size):
            mb.send(team, AGENT, text_for(0, i), sender=SENDER)
            if i % BUILD_BATCH == BUILD_BATCH - 1 or i == size - 1:
                mb.mark_delivered(team, AGENT, mb.unread(team, AGENT))
        return
    # direct: exactly the files that sends plus mark_delivered leave (history lines + newest live ones)
    envs = [_envelope_json(i, read=True) for i in range(size)]
    cut = max(0, size - KEEP_DELIVERED)
    case.history.write_bytes(b"".join(encode(dump_compact(e)) + b"\n" for e in envs[:cut]))
    case.inbox.write_bytes(encode(dump_json(envs[cut:])))


def build_unread(case: Case, size: int) -> None:
    """`size` unread messages in one JSON array: a full re-dump is byte-identical to our appends."""
    case.inbox.write_bytes(encode(dump_json([_envelope_json(i, read=False) for i in range(size)])))


def build_baseline(case: Case, size: int) -> None:
    """The seed CLI keeps what it delivered, marked read: a file of `size` messages, read:true."""
    data = [ccref.envelope(SENDER, text_for(0, i)) | {"read": True} for i in range(size)]
    case.inbox.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


def _count_lines(path: Path) -> int:
    try:
        return sum(1 for line in path.read_bytes().split(b"\n") if line.strip())
    except FileNotFoundError:
        return 0


def bench_append(impl: Impl, kind: str, size: int, reps: int, build: str) -> AppendResult:
    with fresh_case() as case:
        case.inbox.parent.mkdir(parents=True, exist_ok=True)
        if impl == "baseline":
            build_baseline(case, size)
            how = "direct"
        elif kind == "unread":
            build_unread(case, size)
            how = "direct"
        else:
            build_ours_delivered(case, size, build)
            how = build
        live_before = len(json.loads(case.inbox.read_text(encoding="utf-8")))
        hist_before = _count_lines(case.history)
        assert live_before + hist_before == size, (impl, kind, size, live_before, hist_before)
        send = sender_for(impl, case)
        if impl == "ours":
            locking._portalocker()  # the lazy import is a one-off, not an append cost
        times: list[float] = []
        for i in range(reps):
            text = text_for(1, i)
            t0 = time.perf_counter()
            send(text)
            times.append(time.perf_counter() - t0)
        return AppendResult(impl, kind, size, statistics.median(times) * 1000, how, live_before, hist_before)


# -- report -----------------------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    value: str
    goal: str
    ok: bool


@dataclass
class Report:
    quick: bool
    python: str
    cpus: int
    load_before: float = 0.0  # 1-minute load average: this machine's disk and CPU are shared, figures vary
    load_after: float = 0.0
    seconds: float = 0.0
    latency: list[LatencyResult] = field(default_factory=list)
    lock_checks_ms: float = 0.0  # per send: what keeps a broken lock from losing a write (bench_lock_checks)
    throughput: list[ThroughputResult] = field(default_factory=list)
    append: list[AppendResult] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    redis: list[dict[str, Any]] = field(default_factory=list)  # section e's rows (empty: no redis-server)


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs)

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def emit(text: str = "") -> None:
    print(text, flush=True)


def compute_targets(rep: Report, writers: int) -> list[Target]:
    by = {(t.impl, t.writers): t for t in rep.throughput}
    ours8, base8 = by.get(("ours", writers)), by.get(("baseline", writers))
    targets: list[Target] = []
    if ours8 is not None:
        ok = ours8.lost == 0 and ours8.failed == 0 and ours8.valid_json and ours8.duplicates == 0
        targets.append(Target(
            f"ours, {writers} writers x {ours8.per_writer}: lost / failed",
            f"{ours8.lost} / {ours8.failed}" + ("" if ours8.valid_json else " (INVALID JSON)"),
            "0 / 0", ok,
        ))  # fmt: skip
    if ours8 is not None and base8 is not None:
        ratio = ours8.msgs_per_s / base8.msgs_per_s if base8.msgs_per_s > 0 else math.inf
        targets.append(Target(
            f"throughput ours/baseline at {writers} x {ours8.per_writer}", f"{ratio:.1f}x", ">= 10x",
            ratio >= 10,
        ))  # fmt: skip
    if rep.lock_checks_ms:
        targets.append(Target(
            "ours, broken-lock checks per send", f"{rep.lock_checks_ms:.3f} ms", "< 0.3 ms", rep.lock_checks_ms < 0.3
        ))  # fmt: skip
    cost = {a.size: a.median_ms for a in rep.append if a.impl == "ours" and a.kind == "delivered"}
    if cost:
        lo, hi = min(cost), max(cost)
        ratio = cost[hi] / cost[lo]
        targets.append(Target(
            f"ours append cost at {hi:,} / at {lo:,}", f"{ratio:.2f}x", "<= 3x", ratio <= 3
        ))  # fmt: skip
    return targets


@dataclass(frozen=True)
class Plan:
    quick: bool
    build: str
    lat_sends: int
    per_writer: int
    writer_counts: tuple[int, ...]
    sizes: tuple[int, ...]
    reps: int


def run_latency(rep: Report, plan: Plan) -> None:
    for impl in IMPLS:
        rep.latency.append(bench_latency(impl, plan.lat_sends))
    emit(f"a. uncontended send latency ({plan.lat_sends} sends; a reader takes delivery every {READER_EVERY},")
    emit("   untimed: ours mark_delivered, baseline prunes as the current CLI does)")
    emit(table(
        ["impl", "p50 ms", "p99 ms", "mean ms"],
        [[r.impl, f"{r.p50_ms:.2f}", f"{r.p99_ms:.2f}", f"{r.mean_ms:.2f}"] for r in rep.latency],
    ))  # fmt: skip
    rep.lock_checks_ms = bench_lock_checks(plan.lat_sends * 10)
    emit(f"   of ours, the broken-lock checks (lock dir pinned, 4 ownership stats, spool link): "
         f"{rep.lock_checks_ms * 1000:.0f} us per send, timed alone")  # fmt: skip
    emit()


def run_throughput(rep: Report, plan: Plan) -> None:
    for writers in plan.writer_counts:
        for impl in IMPLS:
            rep.throughput.append(bench_throughput(impl, writers, plan.per_writer))
    emit(f"b. throughput: N writer processes released together, {plan.per_writer} messages each, one fresh inbox")
    emit("   (msg/s = successful sends / time from the release to the last writer's end; lost = expected minus")
    emit("   distinct messages in the final file, which must be valid JSON; failed = sends that raised)")
    emit(table(
        ["impl", "writers", "messages", "seconds", "msg/s", "present", "lost", "failed", "valid JSON"],
        [
            [t.impl, str(t.writers), str(t.expected), f"{t.seconds:.2f}", f"{t.msgs_per_s:,.0f}",
             str(t.present), str(t.lost), str(t.failed), "yes" if t.valid_json else "NO"]
            for t in rep.throughput
        ],
    ))  # fmt: skip
    for t in rep.throughput:
        for note in ([f"duplicates: {t.duplicates}"] if t.duplicates else []) + t.leftovers:
            emit(f"   note ({t.impl}, {t.writers} writers): left behind / odd: {note}")
        for err in t.errors[:2]:
            emit(f"   e.g. ({t.impl}, {t.writers} writers): {err}")
    emit()


def run_append(rep: Report, plan: Plan) -> None:
    for size in plan.sizes:
        rep.append.append(bench_append("ours", "delivered", size, plan.reps, plan.build))
        rep.append.append(bench_append("baseline", "delivered", size, plan.reps, plan.build))
    for size in plan.sizes:
        rep.append.append(bench_append("ours", "unread", size, plan.reps, plan.build))
    emit(f"c. append cost: median of {plan.reps} sends into an inbox that has received N messages")
    emit("   delivered: its reader took delivery (ours: mark_delivered, live + history; baseline: a file of")
    emit("   N messages read:true, as the seed CLI keeps them). unread (ours): no reader, informational.")
    base = {a.size: a.median_ms for a in rep.append if a.impl == "baseline"}
    emit(table(
        ["impl", "inbox", "N", "median ms", "vs baseline", "live", "history", "built by"],
        [
            [a.impl, a.kind, f"{a.size:,}", f"{a.median_ms:.2f}",
             f"{a.median_ms / base[a.size]:.2f}x" if a.impl == "ours" else "",
             str(a.live_messages), str(a.history_messages),
             {"send": "sends + mark_delivered", "direct": "files written"}[a.build]]
            for a in rep.append
        ],
    ))  # fmt: skip
    emit()


def run_redis(rep: Report, plan: Plan) -> list[Target]:
    """Section e, printed before the targets; its targets: the issue's (5x the file store's 8-writer sends)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_store_redis as br

    tasks, per_writer = (40, 50) if plan.quick else (200, 200)
    rows = br.run(8, per_writer, tasks)
    emit(f"e. the Redis store beside the file store, through the store interface: 8 writer processes, {per_writer}")
    emit(f"   sends each, into one inbox; 8 processes claiming {tasks} tasks (redis-server: AOF appendfsync always)")
    if isinstance(rows, str):
        emit(f"   {rows}")
        emit()
        return []
    rep.redis = br.as_json(rows)
    emit(table(
        ["store", "sends/s", "lost", "dup", "claims/s", "claim p50 ms", "claim p99 ms", "twice", "never"],
        [[r.store, f"{r.sends_per_s:.0f}", str(r.send_lost), str(r.send_duplicated), f"{r.claims_per_s:.1f}",
          f"{r.claim_p50_ms:.2f}", f"{r.claim_p99_ms:.2f}", str(r.claimed_twice), str(r.never_claimed)]
         for r in rows],
    ))  # fmt: skip
    emit()
    file, redis = rows
    ratio = redis.sends_per_s / file.sends_per_s if file.sends_per_s else 0.0
    exact = all((r.send_lost, r.send_duplicated, r.claimed_twice, r.never_claimed) == (0, 0, 0, 0) for r in rows)
    return [
        Target("redis 8-writer sends/s vs the file store's", f"{ratio:.1f}x", ">= 5x", ratio >= 5),
        Target("both stores: lost, duplicated, claimed twice or never", "0" if exact else "not 0", "0", exact),
    ]


def print_targets(rep: Report, plan: Plan) -> None:
    emit("d. targets" + ("  (quick run: not the acceptance sizes)" if plan.quick else ""))
    emit(table(
        ["target", "measured", "goal", "result"],
        [[t.name, t.value, t.goal, "PASS" if t.ok else "FAIL"] for t in rep.targets],
    ))  # fmt: skip
    emit(f"\n(total {rep.seconds:.0f} s; load average {rep.load_before:.1f} before, {rep.load_after:.1f} after)")


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["_writer"]:
        return writer_main(args_in[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="a smaller run (smoke test)")
    ap.add_argument("--json", metavar="PATH", type=Path, help="also write the results as JSON")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    ap.add_argument(
        "--build", choices=("send", "direct"), default=None,
        help="how our 'delivered' inboxes are built: real sends + mark_delivered (default), or by writing "
        "the history and live files directly (default with --quick)",
    )  # fmt: skip
    args = ap.parse_args(args_in)
    quick: bool = args.quick
    plan = Plan(
        quick=quick, build=args.build or ("direct" if quick else "send"), lat_sends=60 if quick else 300,
        per_writer=100 if quick else 500, writer_counts=(1, 4, 8), sizes=(10, 100, 1_000, 10_000),
        reps=10 if quick else 30,
    )  # fmt: skip

    began = time.monotonic()
    rep = Report(quick=quick, python=sys.version.split()[0], cpus=os.cpu_count() or 0)
    rep.load_before = os.getloadavg()[0]
    emit(
        f"bench_store: {'quick' if quick else 'full'} run, Python {rep.python}, {rep.cpus} CPUs, "
        f"load average {rep.load_before:.1f}"
    )
    emit("baseline = tests/support/ccref.py (the real CLI's algorithm: mkdir lock, 10 retries, 5-100 ms)")
    emit()
    run_latency(rep, plan)
    run_throughput(rep, plan)
    run_append(rep, plan)
    redis_targets = run_redis(rep, plan)
    rep.targets = compute_targets(rep, max(plan.writer_counts)) + redis_targets
    rep.seconds = time.monotonic() - began
    rep.load_after = os.getloadavg()[0]
    print_targets(rep, plan)

    if args.json is not None:
        args.json.write_text(json.dumps(asdict(rep), indent=2) + "\n", encoding="utf-8")
    if args.check and not all(t.ok for t in rep.targets):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
