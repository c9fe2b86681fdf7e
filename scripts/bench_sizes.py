"""Teams of 1, 4, 8 and 16 teammates (ours, tmux), for bench_team.py: delivery, spawn, idle CPU and memory by size.

Per size K, in a world of its own (bench_team.Lab): our lead `agentteams -p go --teammate-mode tmux` spawns w0..wK-1
one after another (each once the previous one said READY; its first answer is held so its fork server is warm);
its model's next answer is then held by the scripted server (the lead waits on a socket, using no CPU of its own),
so it stays up while the whole team idles. Then: CPU (every thread's schedstat run time) of the lead and of every
process of the team over IDLE_WINDOW seconds; VmRSS and Pss summed over them; then `messages` pings, round-robin
over the teammates, each sent at a random phase once the previous one's recipient is idle again, timed from the send
to the request carrying it. Then the lab is closed (tmux server and processes killed): the scale tests
(tests/team/test_team_scale.py) are where a 16-member team shuts down on request.
"""

from __future__ import annotations

import functools
import os
import random
import shlex
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SIZES = (1, 4, 8, 16)
HOLD_MS = 600_000  # the lead's last answer: longer than the run; the lab's close then ends the team
IDLE_WINDOW = 20.0  # seconds of measured idleness: four heartbeats, four idle rounds of each teammate
SETTLE = 2.0  # after the last teammate's idle notice, before the idle window
TEAM = "sizebench"
MIB = 1024.0


def mark(k: int) -> str:
    return f"SIZE-W{k}-MARK"


def script(k: int, hold_ms: int, idle_ms: int) -> dict[str, Any]:
    import bench_team as bt  # first: it puts the project on sys.path

    from tests.support import realclaude as rc

    lead: list[dict[str, Any]] = [
        {**bt.tool("TeamCreate", team_name=TEAM, description="size bench"), "delay_ms": hold_ms}
    ]
    for j in range(k):
        task = bt.tool("Task", name=f"w{j}", team_name=TEAM, description=f"worker {j}",
                       prompt=f"You are w{j}. {mark(j)} Tell the lead you are ready.")  # fmt: skip
        lead += [{**task, "wait_for": f"READY-w{j - 1}-"} if j else task, bt.say(f"w{j} started.")]
    lead.append({**bt.say("LEAD-DONE"), "wait_for": f"READY-w{k - 1}-", "delay_ms": idle_ms})
    workers = [
        route
        for j in range(k)
        for route in (
            {"name": f"w{j}-shutdown", "match": {"any": mark(j), "last_prompt": "shutdown_request"},
             "turns": [rc.approve_shutdown_turn()] * 2},
            {"name": f"w{j}", "match": {"tools": True, "any": mark(j)}, "idle": "pong",
             "turns": [rc.send_message_turn(bt.LEAD, f"READY-w{j}-", summary="ready"), bt.say("Ready.")]},
        )
    ]  # fmt: skip
    return {"routes": [{"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead,
                        "idle": "Noted."}, *workers]}  # fmt: skip


def carries(route: str, i: int) -> Any:
    """A request on `route` whose last user text holds MARK<i>."""
    import bench_team as bt

    from agentteams.mockapi.reqtext import last_user_text

    def check(record: dict[str, Any]) -> bool:
        body = record.get("body")
        if record.get("route") != route or not isinstance(body, dict):
            return False
        return str(i) in bt.MARK.findall(last_user_text(body))

    return check


@dataclass
class Size:
    k: int
    delivery_ms: list[float] = field(default_factory=list)
    spawn_ms: list[float] = field(default_factory=list)  # Task -> first request, per teammate in order
    lead_cpu_pct: float = 0.0  # of one core, while the team idles
    team_cpu_pct: float = 0.0  # every process of the team (the lead included)
    rss_kb: int = 0
    pss_kb: int = 0
    processes: int = 0
    idle_window_s: float = IDLE_WINDOW  # how long its CPU was measured


def _cpu_ns(pid: int) -> int:
    """CPU time of every thread of `pid`, in ns (schedstat: exact, where utime+stime counts 10 ms ticks)."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            total += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile: its time is lost to both ends of the window alike
    return total


def _kb(path: str, key: str) -> int:
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in lines if line.startswith(f"{key}:")), 0)


def answered(route: str, turn: int, record: dict[str, Any]) -> bool:
    return record.get("route") == route and record.get("turn") == turn


def idle(layout: Any, names: list[str]) -> bool:
    """Every one of `names` says it is idle in its presence file (the lead archives idle notices it has read)."""
    from agentteams.store.presence import read_presence

    return all(getattr(read_presence(layout, TEAM, n), "state", None) == "idle" for n in names)


def measure_idle(size: Size, world: Any, lead_pid: int, window: float = IDLE_WINDOW) -> None:
    from tests.support.procs import processes_with_env

    pids = [p for p in processes_with_env("CLAUDE_CONFIG_DIR", str(world.config)) if p != world.tmux.server_pid()]
    before = {p: _cpu_ns(p) for p in pids}
    time.sleep(window)
    spent = {p: _cpu_ns(p) - before[p] for p in pids}
    per_core = 1e9 * window / 100  # ns of one core over the window, per percent
    size.idle_window_s = window
    if os.environ.get("BENCH_SIZES_DEBUG"):
        from tests.support.procs import cmdline

        for pid, ns in sorted(spent.items(), key=lambda x: -x[1]):
            print(f"  {ns / 1e6:7.2f} ms  {pid}  {' '.join(cmdline(pid))[:100]}", file=sys.stderr)
    size.lead_cpu_pct = round(spent.get(lead_pid, 0) / per_core, 2)
    size.team_cpu_pct = round(sum(spent.values()) / per_core, 2)
    size.rss_kb = sum(_kb(f"/proc/{p}/status", "VmRSS") for p in pids)
    size.pss_kb = sum(_kb(f"/proc/{p}/smaps_rollup", "Pss") for p in pids)
    size.processes = len(pids)


def run_size(k: int, messages: int, root: Path, version: str, idle_window: float = IDLE_WINDOW) -> Size:
    import bench_team as bt

    from agentteams.store.file.mailbox import Mailbox
    from agentteams.store.presence import read_presence

    root.mkdir(parents=True)
    size = Size(k)
    with bt.lab(root, script(k, bt.LEAD_HOLD_MS, HOLD_MS), version) as world:
        argv = [str(bt.AGENTTEAMS), "-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "tmux"]
        line = f"{shlex.join(argv)} > {root}/lead.out 2> {root}/lead.err"
        world.tmux.start(world.env, world.proj, ["sh", "-c", line], session="lead")
        for j in range(k):
            bt.first_request(world.server, functools.partial(bt.on_route, f"w{j}"), f"size {k}: w{j}'s first request")
        mailbox, team = Mailbox(world.layout), [f"w{j}" for j in range(k)]
        for j in range(k):  # its "Ready." turn: the last of its start
            bt.first_request(world.server, functools.partial(answered, f"w{j}", 1), f"size {k}: w{j} ready")
        bt.await_(functools.partial(idle, world.layout, team), f"size {k}: the team to go idle")
        time.sleep(SETTLE)
        lead = read_presence(world.layout, TEAM, bt.LEAD)
        assert lead is not None, "the lead wrote no presence file"
        measure_idle(size, world, lead.pid, idle_window)
        for i in range(messages):
            j = i % k
            time.sleep(random.uniform(0, bt.PHASE))
            since = world.server.request_count
            t0 = time.time()
            mailbox.send(TEAM, f"w{j}", f"ping {i} MARK{i}", sender=bt.LEAD)
            hit = bt.first_request(world.server, carries(f"w{j}", i), f"size {k}: message {i}", since)
            size.delivery_ms.append((hit["ts"] - t0) * 1000)
            bt.await_(functools.partial(idle, world.layout, [f"w{j}"]), f"size {k}: w{j} idle after message {i}")
        records = world.server.requests
    turns = {r["turn"]: r["ts"] for r in records if r.get("route") == "lead" and r.get("turn") is not None}
    firsts = [next(r["ts"] for r in records if r.get("route") == f"w{j}") for j in range(k)]
    size.spawn_ms = [(firsts[j] - turns[bt.task_turn(j)]) * 1000 for j in range(k)]
    return size


def measure(
    messages: int, root: Path, version: str, sizes: tuple[int, ...] = SIZES, idle_window: float = IDLE_WINDOW
) -> list[Size]:
    out = []
    for k in sizes:
        print(f"team size {k} ...", flush=True, file=sys.stderr)
        out.append(run_size(k, messages, root / f"size-{k}", version, idle_window))
    return out


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def print_rows(sizes: list[Size]) -> None:
    head = f"{'teammates':>9}{'deliv p50':>11}{'deliv p99':>11}{'spawn 1st':>11}{'spawn Nth':>11}" \
           f"{'lead CPU %':>12}{'team CPU %':>12}{'RSS MiB':>9}{'PSS MiB':>9}{'procs':>7}"  # fmt: skip
    print(head)
    print("-" * len(head))
    for s in sizes:
        print(f"{s.k:>9}{statistics.median(s.delivery_ms):>11.1f}{p(s.delivery_ms, 0.99):>11.1f}"
              f"{s.spawn_ms[0]:>11.0f}{s.spawn_ms[-1]:>11.0f}{s.lead_cpu_pct:>12.2f}{s.team_cpu_pct:>12.2f}"
              f"{s.rss_kb / MIB:>9.0f}{s.pss_kb / MIB:>9.0f}{s.processes:>7}")  # fmt: skip
    one, big = sizes[0], sizes[-1]
    ratio = statistics.median(big.delivery_ms) / statistics.median(one.delivery_ms)
    print(f"* delivery p50 at {big.k} / at {one.k}: {ratio:.2f}x (target <= 2x: {'MET' if ratio <= 2 else 'MISSED'});"
          f" lead CPU at {big.k} idle: {big.lead_cpu_pct:.2f} % of a core, whole team {big.team_cpu_pct:.2f} %"
          f" (target < 1 %: lead {'MET' if big.lead_cpu_pct < 1 else 'MISSED'},"
          f" team {'MET' if big.team_cpu_pct < 1 else 'MISSED'})")  # fmt: skip
    print(f"* CPU over {big.idle_window_s:g} s of idleness ({SETTLE:g} s after the last idle notice); the lead waits "
          "on a held model answer; team = every process with the run's config root but the tmux server "
          "(lead, fork server, teammates, their pane launchers, the lead's shell)")  # fmt: skip


def main() -> None:
    """Run the size rows alone: python scripts/bench_sizes.py [MESSAGES] [SIZE ...]."""
    import tempfile

    import bench_team  # noqa: F401  (puts the project on sys.path)

    from tests.support import realclaude as rc

    args = [int(a) for a in sys.argv[1:]]
    messages, sizes = (args[0] if args else 40), tuple(args[1:]) or SIZES
    with tempfile.TemporaryDirectory(prefix="bench-sizes-") as tmp:
        rows = measure(messages, Path(tmp), rc.DEFAULT, sizes)
    print_rows(rows)


if __name__ == "__main__":
    main()
