"""Teammate spawn latency: a cold process that imports the SDK vs the launcher served by the fork server.

Usage: python scripts/bench_spawn_fork.py [--runs N] [--cold-runs N]

Each row is the median wall time of fresh processes: "running" is from the process start to our code
running with `anthropic` imported (the child prints CLOCK_MONOTONIC, shared by all processes), "total"
to its exit. Cold runs cost ~2 s each, hence fewer of them by default (the whole run takes ~15 s).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TEAMMATE = ["--agent-id", "bench@b", "--agent-name", "bench", "--team-name", "b", "--agent-color", "blue",
            "--parent-session-id", "S"]  # fmt: skip
COLD = "(a) cold: python -c 'import anthropic'"
FORK = "(b) fork server: agentteams --agent-id ..."
REPORT = "import sys, time; assert 'anthropic' in sys.modules; print(time.monotonic())"


def child() -> None:
    """Runs in the forked teammate (the launcher's test hook): prove the SDK is there, say when we started."""
    if "anthropic" not in sys.modules:
        sys.exit("anthropic is not pre-imported")
    print(time.monotonic(), flush=True)


def _console_script() -> list[str]:
    script = Path(sys.executable).with_name("agentteams")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentteams"]


Case = tuple[list[str], dict[str, str]]  # command, environment
Figures = tuple[float | None, float]  # medians: to running (when the command reports it), total


def _measure(cases: dict[str, Case], runs: int) -> dict[str, Figures]:
    """Run the cases round-robin (so load drifts hit every row alike); median seconds per case."""
    import statistics
    import subprocess

    running: dict[str, list[float]] = {name: [] for name in cases}
    total: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, (cmd, env) in cases.items():
            start = time.monotonic()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            total[name].append(time.monotonic() - start)
            if proc.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
            with contextlib.suppress(ValueError):  # a command that does not report when it started
                running[name].append(float(proc.stdout) - start)
    return {
        name: (statistics.median(running[name]) if running[name] else None, statistics.median(total[name]))
        for name in cases
    }


def main() -> None:
    import argparse  # here, not at the top: the forked child imports this module for `child` alone
    import subprocess

    from agentteams.procs import launcher as launch
    from agentteams.procs.fork.client import ForkServer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per fast row")
    parser.add_argument("--cold-runs", type=int, default=5, help="runs of the cold SDK import (~2 s each)")
    args = parser.parse_args()
    # as a user runs it: with bytecode written (pip compiles it at install time)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX") and k != "PYTHONDONTWRITEBYTECODE"}
    for tree in ("agentteams", "scripts"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / tree)], env=env, check=True)
    server_env = dict(env, PYTHONPATH=os.pathsep.join([str(ROOT / "scripts"), str(ROOT)]))
    start = time.monotonic()
    server = ForkServer.start(server_env)
    try:
        if not server.wait_ready(120):
            raise SystemExit(f"fork server not ready: {server.error}")
        ready = time.monotonic() - start
        fork_env = dict(env, **server.env())
        hook_env = dict(fork_env, **{launch.TEST_ENTRY_VAR: "bench_spawn_fork:child"})
        cli = _console_script()
        cold = _measure({COLD: ([sys.executable, "-c", f"import anthropic; {REPORT}"], env)}, args.cold_runs)
        fast = _measure(
            {
                "floor: python -c pass": ([sys.executable, "-c", "pass"], env),
                "floor: python -c 'import ...cli.launch'": (
                    [sys.executable, "-c", "import agentteams.procs.launcher"],
                    env,
                ),
                FORK: ([*cli, *TEAMMATE], hook_env),
                "real CLI via fork server: ... --version": ([*cli, *TEAMMATE, "--version"], fork_env),
            },
            args.runs,
        )
    finally:
        server.stop()
    print(f"fork server start-up (pre-imports, until ready): {ready * 1000:.0f} ms\n")
    print(f"{'case':<46} {'runs':>4} {'running ms':>11} {'total ms':>9}")
    for name, (running, total) in [*cold.items(), *fast.items()]:
        shown = f"{running * 1000:.1f}" if running is not None else "-"
        runs = args.cold_runs if name == COLD else args.runs
        print(f"{name:<46} {runs:>4} {shown:>11} {total * 1000:>9.1f}")
    (cold_run, cold_total), (fork_run, fork_total) = cold[COLD], fast[FORK]
    assert cold_run is not None and fork_run is not None
    print(f"\nratio cold/fork: to running {cold_run / fork_run:.0f}x, total {cold_total / fork_total:.0f}x")


if __name__ == "__main__":
    main()
