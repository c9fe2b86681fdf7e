#!/usr/bin/env python
"""A team outliving its lead: kill -9 the lead of a running three-teammate team, `agentteams -p -c` at once, and
time the kill → the resumed lead's first model request (and the relaunch → that request).

Offline, as `bench_team.py`: our scripted Messages API server stamps each request on arrival (`ts`), the team
runs in panes of a private tmux server with its own config root; the first request of the resumed lead is
the one carrying its team news ("You were resumed ..."). The teammates are idle when the lead is killed.

Usage: python scripts/bench_resume.py [--rounds N] [--json PATH]. `bench_team.py` runs it in the same run.
Target, reported and never enforced: the resumed lead's first request within 3 s of the kill.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.presence import read_presence
from tests.support.procs import pid_alive, processes_with_env
from tests.support.tmuxlab import Tmux

AGENTTEAMS = Path(sys.executable).with_name("agentteams")
TEAM = "resume-bench"
NAMES = ("alice", "bob", "carol")
STEP = 60.0
TARGET_MS = 3000.0


@dataclass
class Resume:
    """Per start-up kind ("warm": `-p` through the warm server, as a user's second run; "cold": a fresh Python,
    AGENTTEAMS_NO_WARM), the figures of each round."""

    kill_to_request_ms: dict[str, list[float]]
    launch_to_request_ms: dict[str, list[float]]


def _tool(tool_name: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": tool_name, "input": args}]}


def script() -> dict[str, Any]:
    lead = [
        _tool("TeamCreate", team_name=TEAM),
        *[_tool("Task", name=n, team_name=TEAM, description="worker", prompt=f"You are {n}.") for n in NAMES],
        {"content": [{"type": "text", "text": "The team is up."}]},
    ]
    routes = [{"name": n, "match": {"system": f"Your name is {n}"}, "turns": [], "idle": "Noted."} for n in NAMES]
    return {"routes": [*routes, {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead,
                                 "idle": "Noted."}]}  # fmt: skip


def _await(cond: Callable[[], bool], what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + STEP
    while not cond():
        if time.monotonic() > deadline:
            said = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""
            raise SystemExit(
                f"bench_resume: timed out after {STEP:g} s waiting for {what}" + (f"; it said:\n{said}" if said else "")
            )
        time.sleep(0.005)


def _resumed(server: MockServer) -> bool:
    return any("You were resumed" in json.dumps(r.get("body")) for r in server.arrivals)


def _idle(layout: Layout) -> bool:
    return all(getattr(read_presence(layout, TEAM, n), "state", "") == "idle" for n in NAMES)


def one_round(root: Path, cold: bool) -> tuple[float, float]:
    """(kill → first request, relaunch → first request), in ms."""
    config, proj = root / "claude", root / "proj"
    proj.mkdir(parents=True)
    layout = Layout(config)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE") and not k.startswith("ANTHROPIC_")}
    env.pop("AGENTTEAMS_NO_WARM", None)
    if cold:
        env["AGENTTEAMS_NO_WARM"] = "1"
    # a warm server of the round's own (ended with the round's processes below): under the per-user one, a bench
    # running beside this one (bench_team's, in the test suite) had its resumed lead killed by this one's clean-up
    runtime = Path(tempfile.mkdtemp(prefix="br-", dir="/tmp"))  # short: the socket's path must fit AF_UNIX
    env["XDG_RUNTIME_DIR"] = str(runtime)
    tmux = Tmux(root / "tmux.sock")
    with MockServer(script()) as server:
        env.update(CLAUDE_CONFIG_DIR=str(config), ANTHROPIC_API_KEY="bench-key-0123456789abcdef",
                   ANTHROPIC_BASE_URL=server.base_url, CLAUDE_CODE_MAX_RETRIES="1")  # fmt: skip
        log = root / "resumed.log"  # what the resumed lead says, shown when it never asks the model
        flags = "--dangerously-skip-permissions --teammate-mode tmux"
        pane = tmux.start(env, proj, options={"remain-on-exit": "on"})
        try:
            tmux.respawn(pane, f"{shlex.quote(str(AGENTTEAMS))} -p go {flags} > /dev/null 2>&1")
            _await(lambda: _idle(layout) and read_presence(layout, TEAM, "team-lead") is not None, "an idle team")
            lead = read_presence(layout, TEAM, "team-lead")
            assert lead is not None
            killed = time.time()
            os.kill(lead.pid, signal.SIGKILL)
            _await(lambda: not pid_alive(lead.pid), "the lead to die")
            launched = time.time()
            tmux.respawn(
                pane, f"{shlex.quote(str(AGENTTEAMS))} -p -c 'carry on' {flags} > {shlex.quote(str(log))} 2>&1"
            )
            resumed = lambda: any("You were resumed" in json.dumps(r.get("body")) for r in server.arrivals)  # noqa: E731
            _await(resumed, "the resumed lead's first request", log)
            ts = next(r["ts"] for r in server.arrivals if "You were resumed" in json.dumps(r.get("body")))
            return (ts - killed) * 1000, (ts - launched) * 1000
        finally:
            with contextlib.suppress(AssertionError):
                tmux.kill_server()
            for pid in processes_with_env("CLAUDE_CONFIG_DIR", str(config)):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            shutil.rmtree(runtime, ignore_errors=True)


def measure(rounds: int = 3) -> Resume:
    out = Resume({"warm": [], "cold": []}, {"warm": [], "cold": []})
    with tempfile.TemporaryDirectory(prefix="bench-resume-") as tmp:
        for kind in ("warm", "cold"):
            for i in range(rounds):
                kill, launch = one_round(Path(tmp) / f"{kind}{i}", cold=kind == "cold")
                out.kill_to_request_ms[kind].append(round(kill, 1))
                out.launch_to_request_ms[kind].append(round(launch, 1))
    return out


def print_rows(res: Resume) -> None:
    for kind, samples in res.kill_to_request_ms.items():
        kill, launch = statistics.median(samples), statistics.median(res.launch_to_request_ms[kind])
        print(f"lead kill -> the resumed lead's first model request ({kind} start), ms (median of {len(samples)}): "
              f"{kill:.0f} (target < {TARGET_MS:.0f}: {'met' if kill < TARGET_MS else 'NOT met'}); "
              f"of it, `agentteams -p -c` start -> that request: {launch:.0f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    res = measure(args.rounds)
    print_rows(res)
    if args.json:
        args.json.write_text(json.dumps(asdict(res), indent=2))


if __name__ == "__main__":
    main()
