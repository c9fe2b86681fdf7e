#!/usr/bin/env python
"""bench_team.py's delivery case alone (ours, the real CLI, the 500 ms poller), and optionally bench_sizes.py's rows.

Delivery: from just before `Mailbox.send` to the recipient's next model request reaching the mock server; the
sender's own send (until it returned) is shown beside it. Every figure comes from the same run, with the load.

With --stamps, our processes mark the path (diagnostics.stamp: the sender's lock, write, fsync, rename; the
recipient's wake, reads, request build) and the medians of each mark, from the send, are printed per kind.

Usage: python scripts/bench_delivery.py [--messages N] [--kinds ours,real,poller] [--sizes 1,16 --size-messages M]
       [--stamps]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

import bench_sizes
import bench_team as bt  # first: it puts the project on sys.path

from tests.support import realclaude as rc

ENV_STAMPS = "AGENTTEAMS_STAMPS"  # agentteams.diagnostics.ENV_STAMPS (a literal: the script also runs older code)


def breakdown(path: Path, d: bt.Delivery) -> list[tuple[str, float]]:
    """Each mark's median offset (ms) from its message's send: S marks are the sender's (this process), R the
    recipient's; the first send is the warm-up's, so message i is the (i+1)th send of this process."""
    lines = [ln.split(" ", 2) for ln in path.read_text().splitlines()] if path.exists() else []
    marks = [(float(t), int(pid), what) for t, pid, what in lines]
    sends = [t for t, pid, what in marks if pid == os.getpid() and what == "send"][1:]
    offsets: dict[str, list[float]] = {}
    for t0, sample in zip(sends, d.samples_ms, strict=False):
        end, seen = t0 + sample / 1000, set()
        # the recipient's marks count from its first wake once the message is about to show (the sender's last
        # mark before its rename: the `renamed` mark itself may be written after the recipient woke); what it did
        # before (a wake on its own read marks, the tail of the turn the previous message started) is not this one's
        visible = next((t for t, pid, what in marks if pid == os.getpid() and what == "fsynced" and t0 <= t <= end), t0)
        woke = next((t for t, pid, what in marks if pid != os.getpid() and what == "inotify" and visible <= t <= end),
                    visible)  # fmt: skip
        for t, pid, what in marks:
            label = f"{'S' if pid == os.getpid() else 'R'} {what}"
            if t0 <= t <= end and label not in seen and (label[0] == "S" or t >= woke):
                seen.add(label)
                offsets.setdefault(label, []).append((t - t0) * 1000)
    rows = [(label, statistics.median(v)) for label, v in offsets.items() if len(v) >= len(sends) // 2]
    # the total last: each mark's median is over the messages it came in (a sender's late `sent` can land just
    # before the request in some and after it in others), so a mark's median may pass the total's
    return [*sorted(rows, key=lambda r: r[1]), ("= request arrives", statistics.median(d.samples_ms[: len(sends)]))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--kinds", default="ours,real,poller")
    parser.add_argument("--sizes", default="", help="team sizes to run too, e.g. 1,16 (none by default)")
    parser.add_argument("--size-messages", type=int, default=40)
    parser.add_argument("--stamps", action="store_true", help="print where the time goes (our kinds)")
    args = parser.parse_args()
    kinds = [cast(bt.Kind, k) for k in args.kinds.split(",") if k]
    signal.signal(signal.SIGTERM, lambda _s, _f: sys.exit(143))  # unwind: tmux servers, processes, temp dirs go
    started, load0 = time.monotonic(), os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-delivery-") as tmp:
        results: dict[str, bt.Delivery] = {}
        stamps: dict[str, list[tuple[str, float]]] = {}
        for kind in kinds:
            print(f"delivery: {kind} ...", file=sys.stderr, flush=True)
            marks = Path(tmp) / f"{kind}.stamps"
            if args.stamps:
                os.environ[ENV_STAMPS] = str(marks)
            results[kind] = bt.run_delivery(kind, args.messages, Path(tmp) / kind, rc.DEFAULT)
            os.environ.pop(ENV_STAMPS, None)
            if args.stamps:
                stamps[kind] = breakdown(marks, results[kind])
        sizes = [int(s) for s in args.sizes.split(",") if s]
        rows = bench_sizes.measure(args.size_messages, Path(tmp) / "sizes", rc.DEFAULT, tuple(sizes)) if sizes else []
    load1 = os.getloadavg()
    print(f"delivery (send -> the request carrying it), {args.messages} messages per kind, {os.cpu_count()} cores")
    print(f"{'kind':<8}{'p50 ms':>9}{'p99 ms':>9}{'mean ms':>9}{'max ms':>9}{'send p50':>10}")
    for name, d in results.items():
        s = bt.stats(d.samples_ms)
        send = statistics.median(d.send_ms)
        print(f"{name:<8}{s.p50_ms:>9.2f}{s.p99_ms:>9.2f}{s.mean_ms:>9.2f}{s.max_ms:>9.2f}{send:>10.2f}")
    for what, found in stamps.items():
        print(f"\nwhere the time goes, {what}: median ms from the send (S sender, R recipient)")
        for label, ms in found:
            print(f"  {label:<22}{ms:>8.2f}")
    if rows:
        print()
        bench_sizes.print_rows(rows)
    print(f"* run {time.monotonic() - started:.0f} s; load average {load0[0]:.2f} {load0[1]:.2f} at the start, "
          f"{load1[0]:.2f} {load1[1]:.2f} at the end")  # fmt: skip


if __name__ == "__main__":
    main()
