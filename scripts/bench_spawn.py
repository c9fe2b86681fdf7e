#!/usr/bin/env python
"""Spawn latency alone (Task call -> the teammate's first model request): bench_team's spawn case, several rounds.

Each round runs bench_team's spawn case (`run_spawn`: our lead in a private tmux server spawning K teammates one after
another, then the same lead with `--teammate-command <real claude>`) for ours and the real Claude Code CLI, in
alternating order (so load drifts hit both); the figures are the medians over every sample, and per round, with the
load average at each round's start. The machine is shared: compare ours and real from the same run, never across runs.

Usage: python scripts/bench_spawn.py [--rounds R] [--spawns K] [--claude-version V] [--json PATH]
Target, reported and never enforced: real/ours >= 20x (issue 15).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import bench_team  # noqa: E402  (this script's directory is on sys.path when it runs)

from tests.support import realclaude as rc  # noqa: E402

TARGET = 20.0
KINDS: tuple[bench_team.Kind, ...] = ("ours", "real")


@dataclass
class Round:
    load: float  # 1-minute load average at its start
    samples_ms: dict[str, list[float]] = field(default_factory=dict)
    forked: list[bool] = field(default_factory=list)  # ours: each teammate a child of the fork server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each spawning K teammates of each kind")
    parser.add_argument("--spawns", type=int, default=5, help="teammates spawned per case")
    parser.add_argument("--claude-version", choices=rc.VERSIONS, default=rc.DEFAULT)
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args()
    rc.claude_bin(args.claude_version)
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory(prefix="bench-spawn-") as tmp:
        for n in range(args.rounds):
            now = Round(os.getloadavg()[0])
            for kind in KINDS if n % 2 == 0 else KINDS[::-1]:
                print(f"round {n + 1}: {kind} ...", file=sys.stderr, flush=True)
                spawn = bench_team.run_spawn(kind, args.spawns, Path(tmp) / f"{n}-{kind}", args.claude_version)
                now.samples_ms[kind] = spawn.samples_ms
                now.forked += spawn.forked
            rounds.append(now)
    samples = {k: [x for r in rounds for x in r.samples_ms[k]] for k in KINDS}
    ours, real = (statistics.median(samples[k]) for k in ("ours", "real"))
    print(f"spawn: Task -> first request, ms; ours vs real Claude Code {args.claude_version} ({os.cpu_count()} cores)")
    print(f"{'round':<7}{'load':>6}{'ours p50':>10}{'real p50':>10}{'real/ours':>11}  forked")
    for n, r in enumerate(rounds):
        o, c = (statistics.median(r.samples_ms[k]) for k in KINDS)
        print(f"{n + 1:<7}{r.load:>6.2f}{o:>10.1f}{c:>10.1f}{c / o:>10.1f}x  {sum(r.forked)}/{len(r.forked)}")
    met = "MET" if real / ours >= TARGET else "MISSED"
    print(f"{'all':<13}{ours:>10.1f}{real:>10.1f}{real / ours:>10.1f}x  target >= {TARGET:.0f}x: {met}")
    print(f"samples, ms: ours {[round(x) for x in samples['ours']]}, real {[round(x) for x in samples['real']]}")
    if args.json:
        data = {"rounds": [asdict(r) for r in rounds], "ours_median_ms": ours, "real_median_ms": real}
        args.json.write_text(json.dumps(data, indent=2))


if __name__ == "__main__":
    main()
