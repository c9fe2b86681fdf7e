#!/usr/bin/env python
"""Write→wake latency of an inbox watcher: inotify against the 50 ms poll fallback and a 500 ms poller.

Another process replaces the inbox atomically (`atomic_write_bytes`: temp file, fsync, rename), as a
sender does; the latency runs from just before that write starts to the moment the reader's `wait()`
returns. The 500 ms poller is the seeds' design (Claude Code's teammate poll loop runs every 500 ms, its
interactive poller every 1000 ms). Each write comes a random part of the poll interval after the reader
started waiting, so a poller's phase is uniform, as for a free-running loop.

Usage: python scripts/bench_wake.py [--writes N] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agentteams.store.fs.watch import FileWatcher, Mode  # noqa: E402

# Reads "seq delay" lines; after `delay` seconds writes an inbox whose one message carries seq and the time.
WRITER = """
import json, sys, time
from pathlib import Path
from agentteams.store.fs.atomic_json import atomic_write_bytes, dump_json, encode, now_iso
inbox = Path(sys.argv[1])
for line in sys.stdin:
    seq, delay = line.split()
    time.sleep(float(delay))
    t0 = time.monotonic()
    text = json.dumps({"seq": int(seq), "t0": t0})
    env = {"from": "team-lead", "text": text, "timestamp": now_iso(), "read": False}
    atomic_write_bytes(inbox, encode(dump_json([env])))
"""


@dataclass
class Row:
    watcher: str
    mode: str
    writes: int
    p50_ms: float
    p99_ms: float
    max_ms: float


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(label: str, mode: Mode, interval: float, writes: int, tmp: Path) -> Row:
    inbox = tmp / f"{label.replace(' ', '-')}.json"
    inbox.write_bytes(b"[]")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(inbox)], stdin=subprocess.PIPE, text=True, cwd=ROOT)
    assert writer.stdin is not None
    latencies: list[float] = []
    try:
        with FileWatcher([inbox], mode=mode, poll_interval=interval) as watcher:
            for seq in range(-1, writes):  # seq -1 warms the writer up (imports) and is not counted
                delay = random.uniform(0.002, max(0.01, interval))
                writer.stdin.write(f"{seq} {delay:.6f}\n")
                writer.stdin.flush()
                deadline = time.monotonic() + 30
                while True:
                    if not watcher.wait(max(0.0, deadline - time.monotonic())):
                        raise SystemExit(f"{label}: write {seq} never woke the watcher")
                    woke = time.monotonic()
                    try:
                        body = json.loads(json.loads(inbox.read_text())[0]["text"])
                    except (ValueError, IndexError, KeyError):
                        continue
                    if body["seq"] == seq:
                        break
                if seq >= 0:
                    latencies.append((woke - body["t0"]) * 1000)
            actual = watcher.mode
    finally:
        writer.stdin.close()
        writer.wait(timeout=30)
    return Row(
        label, actual, len(latencies), round(statistics.median(latencies), 2),
        round(_percentile(latencies, 0.99), 2), round(max(latencies), 2),
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    cases: list[tuple[str, Mode, float]] = [
        ("inotify", "inotify", 0.05),
        ("poll 50 ms (fallback)", "poll", 0.05),
        ("poll 500 ms (seeds)", "poll", 0.5),
    ]
    with tempfile.TemporaryDirectory(prefix="bench-wake-") as tmp:
        rows = [measure(label, mode, interval, args.writes, Path(tmp)) for label, mode, interval in cases]
    print(f"write→wake latency, {args.writes} atomic inbox writes by another process")
    print(f"{'watcher':<24}{'mode':<9}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for r in rows:
        print(f"{r.watcher:<24}{r.mode:<9}{r.p50_ms:>9.2f}{r.p99_ms:>9.2f}{r.max_ms:>9.2f}")
    if args.json:
        args.json.write_text(json.dumps({"rows": [asdict(r) for r in rows]}, indent=2))


if __name__ == "__main__":
    main()
