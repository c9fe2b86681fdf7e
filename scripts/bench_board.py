#!/usr/bin/env python
"""A large task board: `agentteams status`, one TaskList call and claims on a team of N tasks (10 000 by default)
beside a 12-task team, the baseline, measured in the same run.

Each board is written as Claude Code's task files (nine in ten completed, the rest pending or in progress, every
third pending one blocked by the task before it). Rows:
  status       `agentteams status TEAM` as a fresh process (`python -m agentteams`, no warm server), wall time:
               `first` without our copy of the board (every task file read, the copy written: a first look),
               then with it current (a stat per task file: every later look);
  TaskList     one call of the tool in-process, its time, the output's size in bytes and tokens (bytes / 4), and how
               many task-file reads it made (each file once: N);
  claim        `claim(id)` of an unblocked pending task; a teammate's look for work that finds it has some
               (`claim_next(check_busy=True)` answering agent_busy: no lock); and a pick (the same call claiming);
               with the file reads each made.
Medians over --rounds, the boards alternating. `--src DIR` runs another checkout's code (say `git archive HEAD~3
agentteams | tar -x -C /tmp/before`) for a before/after on the same machine. Targets (issue 30), reported, never
enforced: status of 10 000 tasks <= 300 ms; TaskList's output nowhere near 65 000 tokens.

Usage: python scripts/bench_board.py [--tasks N] [--rounds R] [--src DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TEAM = "board"
MEMBERS = ("alice", "bob", "carol", "dave")
BASELINE_TASKS = 12
STATUS_TARGET_MS = 300.0


@dataclass
class Row:
    tasks: int
    status_first_ms: float
    status_ms: float
    tasklist_ms: float
    tasklist_bytes: int
    tasklist_tokens: int
    tasklist_reads: int
    claim_ms: float
    claim_reads: int
    look_ms: float
    look_reads: int
    claim_next_ms: float
    claim_next_reads: int


def _board(root: Path, n: int) -> None:
    """Team TEAM with MEMBERS and `n` task files, written as Claude Code writes them."""
    from agentteams.store.file.teams import NewMember, TeamStore
    from agentteams.store.fs.atomic_json import dump_json
    from agentteams.store.paths import Layout

    layout = Layout(root)
    teams = TeamStore(layout)
    teams.create(TEAM, description="bench_board")
    for name in MEMBERS:
        teams.add_member(TEAM, NewMember(name=name))
    task_dir = layout.task_dir(TEAM)
    task_dir.mkdir(parents=True, exist_ok=True)
    done = n - max(n // 10, 4)  # the last tenth open (four at least: a claim and a pick in each round)
    for i in range(1, n + 1):
        status = "completed" if i <= done else ("in_progress" if i % 25 == 0 else "pending")
        doc: dict[str, Any] = {
            "id": str(i), "subject": f"Implement case {i} of the parser and its tests",
            "description": "Write the code, add tests for it, and run the suite before marking it done.",
            "activeForm": f"Implementing case {i}", "status": status, "blocks": [],
            "blockedBy": [str(i - 1)] if status == "pending" and i % 3 == 0 else [],
        }  # fmt: skip
        if status != "pending":
            doc["owner"] = MEMBERS[i % len(MEMBERS)]
        (task_dir / f"{i}.json").write_text(dump_json(doc))
    then = time.time_ns() - 3600 * 10**9  # written over time, as a real board is: none racily recent
    for f in task_dir.iterdir():
        os.utime(f, ns=(then, then))


@contextmanager
def _counting_reads() -> Iterator[Callable[[], int]]:
    """Counts the task-file reads made meanwhile (through whichever read function the checkout has)."""
    from agentteams.store.fs import safe_paths

    count = [0]
    readers = ("read_bytes", "read_at", "read_at_stat")
    saved = {name: getattr(safe_paths, name) for name in readers if hasattr(safe_paths, name)}

    def wrap(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any) -> Any:
            if re.fullmatch(r"[0-9]+\.json", Path(str(args[-1])).name):  # a task file (`<id>.json`)
                count[0] += 1
            return real(*args)

        return counted

    for name, real in saved.items():
        setattr(safe_paths, name, wrap(name, real))
    try:
        yield lambda: count[0]
    finally:
        for name, real in saved.items():
            setattr(safe_paths, name, real)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any, int]:
    with _counting_reads() as reads:
        start = time.perf_counter()
        out = fn()
        ms = (time.perf_counter() - start) * 1000
        return ms, out, reads()


def _status_ms(root: Path, src: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    env.update(CLAUDE_CONFIG_DIR=str(root), PYTHONPATH=str(src), AGENTTEAMS_NO_WARM="1",
               AGENTTEAMS_TMUX_SOCKET=str(root / "no-tmux-server"))  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "agentteams", "status", TEAM], env=env, cwd=root,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)  # fmt: skip
    ms = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"bench_board: agentteams status failed: {proc.stderr.decode()[-500:]}")
    return ms


def _one_round(root: Path, n: int, src: Path) -> Row:
    from agentteams.store.file.store import FileStore
    from agentteams.store.paths import Layout
    from agentteams.tools.base import ToolContext
    from agentteams.tools.team.task_tools import TaskListTool

    copy = root / "agentteams" / "boards" / f"{TEAM}.json"  # agentteams.store.paths.Layout.board_copy_file
    copy.unlink(missing_ok=True)
    status_first_ms = _status_ms(root, src)
    status_ms = _status_ms(root, src)
    store = FileStore(Layout(root))
    ctx = ToolContext(cwd=root, store=store, session_id="bench-board", agent_name="alice", team_name=TEAM,
                      is_lead=False)  # fmt: skip
    list_ms, result, list_reads = _timed(lambda: TaskListTool().run({}, ctx))
    size = len(result.content.encode())
    # the last unblocked pending task (an id not a multiple of 3 or 25), claimed by id; then a pick by an agent that
    # owns nothing; both put back afterwards, so every round finds the same board
    target = str(next(i for i in range(n, 0, -1) if i % 3 and i % 25))
    claim_ms, claimed, claim_reads = _timed(lambda: store.tasks.claim(TEAM, target, "carol"))
    look_ms, looked, look_reads = _timed(lambda: store.tasks.claim_next(TEAM, "carol", check_busy=True))
    assert looked.reason == "agent_busy", looked
    next_ms, picked, next_reads = _timed(lambda: store.tasks.claim_next(TEAM, "erin", check_busy=True))
    assert claimed.success and picked.success and picked.task is not None, (claimed, picked)
    for task_id in (target, picked.task.id):
        store.tasks.update(TEAM, task_id, owner=None, status="pending")
    return Row(n, status_first_ms, status_ms, list_ms, size, size // 4, list_reads, claim_ms, claim_reads, look_ms,
               look_reads, next_ms, next_reads)  # fmt: skip


def measure(sizes: list[int], rounds: int, src: Path) -> list[Row]:
    samples: dict[int, list[Row]] = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory(prefix="bench-board-") as tmp:
        roots = {n: Path(tmp) / f"board{n}" for n in sizes}
        for n, root in roots.items():
            _board(root, n)
            _status_ms(root, src)  # the page cache warmed, once
        for r in range(rounds):
            for n in sizes if r % 2 == 0 else sizes[::-1]:
                samples[n].append(_one_round(roots[n], n, src))
    med = statistics.median
    return [
        Row(n, med(x.status_first_ms for x in rows), med(x.status_ms for x in rows), med(x.tasklist_ms for x in rows),
            rows[-1].tasklist_bytes,
            rows[-1].tasklist_tokens, rows[-1].tasklist_reads, med(x.claim_ms for x in rows), rows[-1].claim_reads,
            med(x.look_ms for x in rows), rows[-1].look_reads, med(x.claim_next_ms for x in rows),
            rows[-1].claim_next_reads)
        for n, rows in samples.items()
    ]  # fmt: skip


def print_table(rows: list[Row], rounds: int, src: Path, load: tuple[float, float, float]) -> None:
    print(f"task board: medians of {rounds} rounds; code from {src}; load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f} ({os.cpu_count()} cores)")  # fmt: skip
    print(f"{'tasks':>6} {'first ms':>9} {'status ms':>10} {'TaskList ms':>12} {'bytes':>8} {'~tokens':>8} "
          f"{'reads':>6} {'claim ms':>9} {'reads':>6} {'look ms':>8} {'reads':>6} {'pick ms':>8} "
          f"{'reads':>6}")  # fmt: skip
    for r in rows:
        print(f"{r.tasks:>6} {r.status_first_ms:>9.0f} {r.status_ms:>10.0f} {r.tasklist_ms:>12.1f} "
              f"{r.tasklist_bytes:>8} {r.tasklist_tokens:>8} "
              f"{r.tasklist_reads:>6} {r.claim_ms:>9.2f} {r.claim_reads:>6} {r.look_ms:>8.1f} {r.look_reads:>6} "
              f"{r.claim_next_ms:>8.1f} {r.claim_next_reads:>6}")  # fmt: skip
    big = max(rows, key=lambda r: r.tasks)
    for label, ms, base in (("first status", big.status_first_ms, rows[0].status_first_ms),
                            ("status", big.status_ms, rows[0].status_ms)):  # fmt: skip
        met = "met" if ms <= STATUS_TARGET_MS else "NOT met"
        print(f"{label} of {big.tasks} tasks: {ms:.0f} ms (target <= {STATUS_TARGET_MS:.0f}: {met}); "
              f"{ms / base:.2f}x the {rows[0].tasks}-task team")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=10_000, help="the large board's size")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--src", type=Path, default=ROOT, help="a checkout whose code to measure (default: this one)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    src = args.src.resolve()
    sys.path.insert(0, str(src))
    load = os.getloadavg()
    rows = measure([BASELINE_TASKS, args.tasks], args.rounds, src)
    print_table(rows, args.rounds, src, load)
    if args.json:
        args.json.write_text(json.dumps({"load": load, "src": str(src), "rows": [asdict(r) for r in rows]}, indent=2))


if __name__ == "__main__":
    main()
