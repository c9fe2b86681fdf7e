#!/usr/bin/env python
"""Teams against the real Claude Code CLI, in one run: message delivery, spawn latency, idle memory.

Everything runs offline against the project's scripted Messages API server (`agentteams.mockapi`), which
stamps each request with `time.time()` on arrival (`ts`); teammates run in panes of private tmux servers;
the real CLI is today's, Claude Code 2.1.330 (`--claude-version` picks another pinned one), as
`tests/support/realclaude.py` finds it (installed under `.cache/claude-code/<version>`), run with a
seeded home. Each case gets its own config root, mock server and tmux server, all removed after.

Delivery (inbox write → the recipient's next model request reaching the server): a team written by our
`TeamStore`, one teammate `bench` started by hand in a pane with the flags a lead gives (ours through a
running fork server, as our lead starts them; the real CLI with the same flags), and a route answering
each of its requests with a short text, so one message makes one model request and the teammate goes
idle. A warm-up message comes first. Then per message: wait for the teammate's idle notice in
team-lead's inbox, wait a random 0-500 ms more (so a poller meets messages at a uniform phase, as it
does messages that arrive at any time), `t0 = time.time()`, `Mailbox.send("ping i MARKi")`; the
latency is the `ts` of the first request whose last user text holds `MARKi`, minus `t0`. The baseline,
"500 ms poller" (the seeds' design; Claude Code's teammate loop also polls every 500 ms), is a process
written here: sleep 500 ms, read the inbox JSON, POST each new message (http.client), send an idle notice.

Spawn (Task call → the teammate's first model request): our lead `agentteams -p go --teammate-mode tmux`
in a private tmux server, scripted to create a team and spawn K teammates one after another (each once
the previous one has said READY; earlier ones stay up, idle), then the same with `--teammate-command
<claude>`. The latency runs from the `ts` of the lead request answered with the Task call (the answer is
tiny and immediate) to the `ts` of that teammate's first model request. The lead's first answer is held
4 s so its fork server (~2 s to pre-import the SDK) is ready: a warm lead, as a user meets one; the
notes say when the fork server was ready and whether each teammate of ours was forked from it. The cold case is the
same with no hold: our lead's first Task call comes before its fork server is up (a teammate started from cold).

Idle memory: after the delivery teammate's warm-up turn and idle notice (+1 s), VmRSS, VmHWM and Pss
(`/proc/PID/smaps_rollup`) of the teammate process: ours is the pid in its presence file (a child of the
fork server: Pss charges it a fair share of the warm pages it shares with the server), the real one the
claude process in its pane. "All processes" adds our launcher in the pane (the real CLI's descendants).

Delivery on the Redis store (scripts/bench_redis_delivery.py): the same teammate with its team in a private
redis-server, beside the file store's figures of the same run (skipped without redis-server).

Mid-turn delivery (a message sent while the teammate is inside the 2nd of six tool calls → the request that
carries it, in tool calls and ms; ours and the real CLI): `scripts/bench_steer.py`, run here in the same run.
Team sizes (scripts/bench_sizes.py): our lead with 1, 4, 8 and 16 teammates in tmux; delivery p50/p99, spawn of
the first and the Nth teammate, CPU of the lead and of the whole team while it idles, total RSS and PSS.

Usage: python scripts/bench_team.py [--messages N] [--spawns K] [--size-messages M] [--quick] [--claude-version V]
       [--json PATH]
Targets, reported and never enforced: delivery p50 < 10 ms and >= 50x better than the real CLI's; spawn
>= 20x faster (issue 15; `bench_spawn.py` runs that case alone, several rounds); idle RSS at most half.
A full run takes about 7 minutes on 2 cores (the sizes add ~3).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import bench_resume  # noqa: E402  (this script's directory is on sys.path when it runs)
import bench_signing  # noqa: E402
import bench_sizes  # noqa: E402

from agentteams.backends.tmux import TmuxBackend  # noqa: E402
from agentteams.mockapi import MockServer  # noqa: E402
from agentteams.mockapi.reqtext import last_user_text  # noqa: E402
from agentteams.procs.fork.client import ForkServer  # noqa: E402
from agentteams.store.file.mailbox import Mailbox  # noqa: E402
from agentteams.store.file.teams import NewMember, TeamStore  # noqa: E402
from agentteams.store.paths import Layout  # noqa: E402
from agentteams.store.presence import read_presence  # noqa: E402
from agentteams.store.protocol import IdleNotification, parse_message  # noqa: E402
from tests.support import realclaude as rc  # noqa: E402
from tests.support.procs import find_process, process_tree, processes_with_env  # noqa: E402
from tests.support.tmuxlab import Tmux  # noqa: E402

Kind = Literal["ours", "real", "poller"]
DELIVERY: tuple[Kind, ...] = ("ours", "real", "poller")
SPAWN: tuple[Kind, ...] = ("ours", "real")
AGENTTEAMS = Path(sys.executable).with_name("agentteams")
MODEL = "claude-sonnet-4-6"
NAME = "bench"
LEAD = "team-lead"
TEAM = "bench team"
MARK = re.compile(r"MARK(\d+)(?!\d)")
PHASE = 0.5  # the random wait before each message spans one poll interval of the baseline
SETTLE = 1.0  # after the warm-up idle notice, before memory is read
LEAD_HOLD_MS = 4000
STEP = 60.0  # seconds any one awaited event may take before the run is called broken
MIB = 1024.0

# The baseline teammate: argv inbox port team name model. Plain stdlib HTTP; our mailbox for the idle notice.
POLLER = """
import http.client, json, sys, time
from pathlib import Path
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.paths import Layout
from agentteams.store.protocol import IdleNotification
inbox, port, team, name, model = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
mailbox = Mailbox(Layout.from_env())
tools = [{"name": "noop", "description": "does nothing", "input_schema": {"type": "object", "properties": {}}}]
seen = 0
while True:
    time.sleep(0.5)
    try:
        messages = json.loads(inbox.read_text())
    except (OSError, ValueError):
        continue
    for msg in messages[seen:]:
        turn = [{"role": "user", "content": msg["text"]}]
        body = {"model": model, "max_tokens": 64, "tools": tools, "messages": turn}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/v1/messages", json.dumps(body), {"content-type": "application/json"})
        conn.getresponse().read()
        conn.close()
        mailbox.send(team, "team-lead", IdleNotification(sender=name, timestamp=now_iso()).to_text(), sender=name)
    seen = len(messages)
"""


# -- a scratch world per case -----------------------------------------------------------------------


def base_env() -> dict[str, str]:
    """This process's environment without anything that would point a child at another tmux, key or root."""
    drop = ("TMUX", "TMUX_PANE", "PYTHONDONTWRITEBYTECODE")
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith(("ANTHROPIC_", "CLAUDE"))}


class Lab:
    """A config root (seeded for the real CLI), a project dir, a scripted server and a tmux server of its own.

    `close` kills the tmux server, then (by pid) whatever still runs with this config root, and stops the server.
    """

    def __init__(self, root: Path, script: dict[str, Any], version: str) -> None:
        self.root = root
        self.config = root / "claude"
        self.proj = root / "proj"
        self.proj.mkdir(parents=True)
        self.claude = rc.claude_bin(version)
        rc.seed_home(self.config, [self.proj], version)
        self.layout = Layout(self.config)
        self.server = MockServer(script).start()
        self.env = {**base_env(), **rc.claude_env(self.config, self.server.base_url), "CLAUDE_CODE_MAX_RETRIES": "1"}
        self.tmux = Tmux(root / "tmux.sock")
        self.extras = contextlib.ExitStack()  # what a case started besides: a fork server, the poller

    def close(self) -> None:
        try:
            self.tmux.kill_server()
            self.extras.close()
            deadline = time.monotonic() + 5
            while (left := processes_with_env("CLAUDE_CONFIG_DIR", str(self.config))) and time.monotonic() < deadline:
                time.sleep(0.05)
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        finally:
            self.server.stop()


@contextlib.contextmanager
def lab(root: Path, script: dict[str, Any], version: str) -> Iterator[Lab]:
    world = Lab(root, script, version)
    try:
        yield world
    finally:
        world.close()


def await_(cond: Callable[[], bool], what: str, timeout: float = STEP, interval: float = 0.01) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise SystemExit(f"bench_team: timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def first_request(
    server: MockServer, where: Callable[[dict[str, Any]], bool], what: str, since: int = 0
) -> dict[str, Any]:
    """The first request `where` accepts, from the `since`th on. A timed case passes the count from before its
    start: the server's threads share this process, and a scan of every earlier request would hold the GIL while
    the one being timed arrives."""
    try:
        return server.wait_for_requests(1, STEP, where, since)[0]
    except TimeoutError:
        raise SystemExit(f"bench_team: timed out after {STEP:g} s waiting for {what}") from None


def on_route(route: str, record: dict[str, Any]) -> bool:
    return record.get("route") == route


def carries(i: int) -> Callable[[dict[str, Any]], bool]:
    """A main-route request whose last user text holds MARK<i>."""

    def check(record: dict[str, Any]) -> bool:
        body = record.get("body")
        if record.get("route") != "main" or not isinstance(body, dict):
            return False
        return str(i) in MARK.findall(last_user_text(body))

    return check


# -- memory -----------------------------------------------------------------------------------------


@dataclass
class Memory:
    """kB. The teammate process (rss, hwm, pss) and every process it takes (all_*; `processes` of them)."""

    rss_kb: int
    hwm_kb: int
    pss_kb: int
    all_rss_kb: int
    all_pss_kb: int
    processes: int


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise SystemExit(f"bench_team: no {key} for pid {pid}")


def _pss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    raise SystemExit(f"bench_team: no Pss for pid {pid}")


def descendants(pid: int) -> list[int]:
    return process_tree([pid])[1:]


def memory(main: int, others: list[int]) -> Memory:
    every = [main, *[p for p in others if p != main]]
    return Memory(
        rss_kb=_status_kb(main, "VmRSS"), hwm_kb=_status_kb(main, "VmHWM"), pss_kb=_pss_kb(main),
        all_rss_kb=sum(_status_kb(p, "VmRSS") for p in every), all_pss_kb=sum(_pss_kb(p) for p in every),
        processes=len(every),
    )  # fmt: skip


# -- delivery ---------------------------------------------------------------------------------------


@dataclass
class Delivery:
    kind: Kind
    samples_ms: list[float]
    send_ms: list[float] = field(default_factory=list)  # of which Mailbox.send itself, until it returned
    idle: Memory | None = None  # after the warm-up turn
    after: Memory | None = None  # after the last message


def idle_after(inbox: Path, count: int) -> bool:
    """Whether team-lead's inbox holds `count` idle notices from the teammate (read-only: a torn read is a no)."""
    try:
        envs = json.loads(inbox.read_bytes())
    except (OSError, ValueError):
        return False
    notices = [
        e for e in envs if e.get("from") == NAME and isinstance(parse_message(e.get("text", "")), IdleNotification)
    ]
    return len(notices) >= count


def start_teammate(kind: Kind, world: Lab, team: str, session: str) -> Callable[[], Memory]:
    """Start `bench` in a pane beside a placeholder lead pane; returns how to read its memory."""
    lead_pane = world.tmux.start(world.env, world.proj, ["cat"], session="lead")
    flags = ["--agent-id", f"{NAME}@{team}", "--agent-name", NAME, "--team-name", team, "--agent-color", "blue",
             "--parent-session-id", session, "--dangerously-skip-permissions", "--model", MODEL]  # fmt: skip
    env = {"CLAUDECODE": "1", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1"}  # the rest: the tmux server's env
    if kind == "ours":
        server = ForkServer.start(world.env)
        world.extras.callback(server.stop)
        if not server.wait_ready(STEP):
            raise SystemExit(f"bench_team: fork server not ready: {server.error}")
        env.update(server.env())
    argv = [str(AGENTTEAMS) if kind == "ours" else str(world.claude), *flags]
    pane = TmuxBackend(str(world.tmux.sock)).spawn_pane(lead_pane, NAME, "blue", argv, world.proj, env)
    TeamStore(world.layout).set_member_fields(team, NAME, tmux_pane_id=pane)
    pane_pid = world.tmux.panes()[pane].pid
    assert pane_pid is not None

    def in_pane() -> int:
        pid = find_process(pane_pid, "--agent-name")
        if pid is None:
            raise SystemExit(f"bench_team: no teammate process in pane {pane}:\n{world.tmux.capture(pane)}")
        return pid

    def read() -> Memory:
        pid = in_pane()
        if kind == "real":
            return memory(pid, descendants(pid))
        presence = read_presence(world.layout, team, NAME)
        if presence is None:
            raise SystemExit("bench_team: our teammate wrote no presence file")
        return memory(presence.pid, [pid])  # the teammate (forked by the server) and its launcher in the pane

    return read


def run_delivery(kind: Kind, n: int, root: Path, version: str) -> Delivery:
    script = {"routes": [{"name": "main", "match": {"tools": True}, "turns": [], "idle": "pong"}]}
    with lab(root, script, version) as world:
        teams, mailbox = TeamStore(world.layout), Mailbox(world.layout)
        session = str(uuid.uuid4())
        team = teams.create(TEAM, lead_session_id=session, cwd=str(world.proj)).name
        teams.add_member(team, NewMember(name=NAME, color="blue", model=MODEL, prompt="bench", cwd=str(world.proj),
                                         backend_type="process" if kind == "poller" else "tmux"))  # fmt: skip
        mailbox.send(team, NAME, "warm-up WARMUP: answer briefly", sender=LEAD)
        read_memory: Callable[[], Memory] | None = None
        if kind == "poller":
            inbox, port = mailbox.inbox_path(team, NAME), str(world.server.port)
            proc = subprocess.Popen(
                [sys.executable, "-c", POLLER, str(inbox), port, team, NAME, MODEL],
                env={**world.env, "PYTHONPATH": str(ROOT)}, cwd=world.proj,
            )  # fmt: skip
            world.extras.callback(proc.wait)
            world.extras.callback(proc.kill)
        else:
            read_memory = start_teammate(kind, world, team, session)
        first_request(world.server, lambda r: r.get("route") == "main" and "WARMUP" in last_user_text(r["body"]),
                      f"{kind}: the warm-up request")  # fmt: skip
        lead_inbox = mailbox.inbox_path(team, LEAD)
        await_(functools.partial(idle_after, lead_inbox, 1), f"{kind}: the warm-up idle notice")
        time.sleep(SETTLE)
        result = Delivery(kind, [], idle=read_memory() if read_memory else None)
        for i in range(n):
            time.sleep(random.uniform(0, PHASE))
            since = world.server.request_count
            t0 = time.time()
            mailbox.send(team, NAME, f"ping {i} MARK{i}", sender=LEAD)
            result.send_ms.append((time.time() - t0) * 1000)
            hit = first_request(world.server, carries(i), f"{kind}: the request for message {i}", since)
            result.samples_ms.append((hit["ts"] - t0) * 1000)
            # the warm-up's notice and one per message
            await_(functools.partial(idle_after, lead_inbox, i + 2), f"{kind}: the idle notice after message {i}")
        if read_memory is not None:
            time.sleep(SETTLE)
            result.after = read_memory()
    return result


# -- spawn ------------------------------------------------------------------------------------------


@dataclass
class Spawn:
    kind: Kind
    samples_ms: list[float]
    lead_exit: int | None  # the lead's exit status (None: it did not exit in time and was killed)
    forkserver_ready_s: float | None = None  # after the lead's first request
    first_task_s: float = 0.0  # the first Task answer, after the lead's first request
    forked: list[bool] = field(default_factory=list)  # ours: each teammate a child of the fork server
    lead_stderr: str = ""  # its last lines, when it did not exit 0


def say(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def tool(tool_name: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": tool_name, "input": args}]}


def spawn_mark(k: int) -> str:
    return f"SPAWN-{k}-MARK"


def task_turn(k: int) -> int:
    """The index of the lead turn that spawns teammate k (after TeamCreate; each Task then a text turn)."""
    return 1 + 2 * k


def spawn_script(k: int, hold_ms: int = LEAD_HOLD_MS) -> dict[str, Any]:
    lead = [{**tool("TeamCreate", team_name="spawnbench", description="spawn bench"), "delay_ms": hold_ms}]
    for j in range(k):
        task = tool("Task", name=f"w{j}", team_name="spawnbench", description=f"worker {j}",
                    prompt=f"You are w{j}. {spawn_mark(j)} Tell the lead you are ready.")  # fmt: skip
        lead += [{**task, "wait_for": f"READY-w{j - 1}"} if j else task, say(f"w{j} started.")]
    lead.append({**say("LEAD-DONE"), "wait_for": f"READY-w{k - 1}"})
    workers = [
        {"name": f"w{j}", "match": {"tools": True, "any": spawn_mark(j)}, "idle": "Noted.",
         "turns": [rc.send_message_turn(LEAD, f"READY-w{j}", summary="ready"), say("Ready."),
                   rc.approve_shutdown_turn()]}
        for j in range(k)
    ]  # fmt: skip
    return {"routes": [{"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead,
                        "idle": "Noted."}, *workers]}  # fmt: skip


def watch_forkserver(world: Lab, lead_pane_pid: int, stop: threading.Event) -> list[float]:
    """In a thread: the time our lead's fork server is listening (its socket exists: bound after pre-imports)."""
    seen: list[float] = []

    def poll() -> None:
        while not stop.is_set():
            pid = find_process(lead_pane_pid, "agentteams.procs.fork.server")
            if pid is not None:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
                if "--dir" in argv and (Path(argv[argv.index("--dir") + 1]) / f"fs-{pid}.sock").exists():
                    seen.append(time.time())
                    return
            stop.wait(0.02)

    threading.Thread(target=poll, name="forkserver-watch", daemon=True).start()
    return seen


def run_spawn(kind: Kind, k: int, root: Path, version: str, *, warm: bool = True) -> Spawn:
    """`warm`: the lead's first answer held until its fork server is up; else its Task calls come at once."""
    with lab(root, spawn_script(k, LEAD_HOLD_MS if warm else 0), version) as world:
        argv = [str(AGENTTEAMS), "-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "tmux"]
        if kind == "real":
            argv += ["--teammate-command", str(world.claude)]
        done = root / "lead.rc"
        line = f"{shlex.join(argv)} > {root}/lead.out 2> {root}/lead.err; echo $? > {done}"
        pane = world.tmux.start(world.env, world.proj, ["sh", "-c", line], session="lead")
        pane_pid = world.tmux.panes()[pane].pid
        assert pane_pid is not None
        stop = threading.Event()
        ready = watch_forkserver(world, pane_pid, stop) if kind == "ours" else []
        forked: list[bool] = []
        for j in range(k):
            first_request(world.server, functools.partial(on_route, f"w{j}"), f"{kind}: teammate w{j}'s first request")
            if kind == "ours":
                forked.append(_forked(world, j))
        stop.set()
        exited = _wait_exit(done)
        err = "" if exited == 0 else " | ".join((root / "lead.err").read_text(errors="replace").splitlines()[-3:])
        records = world.server.requests
    lead = [r for r in records if r.get("route") == "lead"]
    tasks = {r["turn"]: r["ts"] for r in lead if r.get("turn") is not None}
    firsts = {j: next(r["ts"] for r in records if r.get("route") == f"w{j}") for j in range(k)}
    return Spawn(
        kind, [(firsts[j] - tasks[task_turn(j)]) * 1000 for j in range(k)], exited,
        forkserver_ready_s=ready[0] - lead[0]["ts"] if ready else None,
        first_task_s=tasks[task_turn(0)] - lead[0]["ts"], forked=forked, lead_stderr=err,
    )  # fmt: skip


def _forked(world: Lab, j: int) -> bool:
    """Whether our teammate w<j> runs in a process the fork server forked (not a cold start in its pane)."""
    team = "spawnbench"
    await_(lambda: read_presence(world.layout, team, f"w{j}") is not None, f"w{j}'s presence file")
    presence = read_presence(world.layout, team, f"w{j}")
    assert presence is not None
    try:
        stat = Path(f"/proc/{presence.pid}/stat").read_text()
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        return "agentteams.procs.fork.server" in Path(f"/proc/{parent}/cmdline").read_bytes().decode()
    except OSError:
        return False


def _wait_exit(done: Path) -> int | None:
    """The lead's exit status once it has shut its team down and exited; None if it takes over STEP seconds."""
    with contextlib.suppress(SystemExit):
        await_(lambda: done.exists() and done.read_text().strip() != "", "the lead to exit", interval=0.05)
        return int(done.read_text())
    return None


# -- report -----------------------------------------------------------------------------------------


@dataclass
class Stats:
    n: int
    p50_ms: float
    p99_ms: float
    mean_ms: float
    max_ms: float


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def stats(samples: list[float]) -> Stats:
    return Stats(len(samples), round(statistics.median(samples), 2), round(percentile(samples, 0.99), 2),
                 round(statistics.fmean(samples), 2), round(max(samples), 2))  # fmt: skip


@dataclass
class Row:
    figure: str
    ours: float
    real: float
    poller: float | None
    ratio: str
    target: str = ""
    met: bool | None = None


def build_rows(d: dict[Kind, Delivery], s: dict[Kind, Spawn], cold: Spawn) -> list[Row]:
    o, r, p = (stats(d[k].samples_ms) for k in ("ours", "real", "poller"))
    n = o.n
    rows = []
    for what in ("p50", "p99", "mean"):
        ov, rv, pv = (getattr(x, f"{what}_ms") for x in (o, r, p))
        rows.append(Row(f"delivery {what}, ms ({n} messages)", ov, rv, pv, f"real/ours {rv / ov:.0f}x, poller/ours "
                        f"{pv / ov:.0f}x"))  # fmt: skip
    rows[0].target, rows[0].met = "ours < 10 ms; real/ours >= 50x", o.p50_ms < 10 and r.p50_ms / o.p50_ms >= 50
    so, sr = (statistics.median(s[k].samples_ms) for k in ("ours", "real"))
    runs = len(s["ours"].samples_ms)
    rows.append(Row(f"spawn: Task -> first request, ms (median of {runs})", round(so, 1), round(sr, 1), None,
                    f"real/ours {sr / so:.1f}x", "real/ours >= 20x", sr / so >= 20))  # fmt: skip
    # the cold lead's first teammate is the one that meets no fork server: the later ones are warm again
    sc, sr1 = cold.samples_ms[0], s["real"].samples_ms[0]
    rows.append(Row("cold-lead spawn: its first teammate (no fork server yet) vs the real CLI's first, ms",
                    round(sc, 1), round(sr1, 1), None, f"real/ours {sr1 / sc:.1f}x"))  # fmt: skip
    mo, mr = d["ours"].idle, d["real"].idle
    assert mo is not None and mr is not None
    for label, ok, rk, target in (
        ("idle RSS, teammate process, MiB", mo.rss_kb, mr.rss_kb, "ours/real <= 0.5"),
        ("idle PSS, teammate process, MiB", mo.pss_kb, mr.pss_kb, ""),
        ("peak RSS (VmHWM) at idle, MiB", mo.hwm_kb, mr.hwm_kb, ""),
        (f"idle PSS, all its processes ({mo.processes} / {mr.processes}), MiB", mo.all_pss_kb, mr.all_pss_kb, ""),
    ):
        met = ok / rk <= 0.5 if target else None
        rows.append(Row(label, round(ok / MIB, 1), round(rk / MIB, 1), None, f"ours/real {ok / rk:.2f}", target, met))
    ao, ar = d["ours"].after, d["real"].after
    if ao is not None and ar is not None:
        rows.append(Row(f"RSS after the {n} messages, MiB", round(ao.rss_kb / MIB, 1), round(ar.rss_kb / MIB, 1),
                        None, f"ours/real {ao.rss_kb / ar.rss_kb:.2f}"))  # fmt: skip
    return rows


def print_table(rows: list[Row]) -> None:
    width = max(len(r.figure) for r in rows) + 2
    head = f"{'figure':<{width}}{'ours':>9}{'real CC':>10}{'500ms poll':>12}  {'ratio':<32}{'target':<32}result"
    print(head)
    print("-" * len(head))
    for r in rows:
        poller = f"{r.poller:.1f}" if r.poller is not None else "-"
        met = "" if r.met is None else ("MET" if r.met else "MISSED")
        print(f"{r.figure:<{width}}{r.ours:>9.1f}{r.real:>10.1f}{poller:>12}  {r.ratio:<32}{r.target:<32}{met}")


def notes(
    d: dict[Kind, Delivery], s: dict[Kind, Spawn], cold: Spawn, elapsed: float, load: tuple[float, float]
) -> list[str]:
    ours = s["ours"]
    ready = f"{ours.forkserver_ready_s:+.2f} s" if ours.forkserver_ready_s is not None else "never seen"
    send = ", ".join(f"{k} {statistics.median(v.send_ms):.1f}" for k, v in d.items())
    lines = [
        f"warm lead: its fork server was listening at {ready} from the lead's first request, its first Task call "
        f"came at {ours.first_task_s:+.2f} s; teammates forked from it: {sum(ours.forked)} of {len(ours.forked)}",
        f"cold lead: its first Task call came at {cold.first_task_s:+.2f} s, teammates forked from its fork server: "
        f"{sum(cold.forked)} of {len(cold.forked)}",
        f"spawn samples, ms: ours {[round(x) for x in ours.samples_ms]}, cold lead "
        f"{[round(x) for x in cold.samples_ms]}, "
        f"real {[round(x) for x in s['real'].samples_ms]}",
        f"delivery includes the sender's Mailbox.send until it returned, p50 ms: {send}",
        "memory: ours = the presence-file pid (forked by the fork server; all processes: + its launcher in the pane), "
        "real = the claude process in its pane (+ descendants)",
    ]
    for k, v in s.items():
        if v.lead_exit != 0:
            lines.append(f"the {k} spawn run's lead exited {v.lead_exit}: {v.lead_stderr or '(no stderr)'}")
    lines.append(f"run time {elapsed:.0f} s; load average (1 min) {load[0]:.1f} at the start, {load[1]:.1f} at the end")
    return lines


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=100, help="messages per delivery case")
    parser.add_argument("--spawns", type=int, default=5, help="teammates spawned per spawn case")
    parser.add_argument(
        "--quick", action="store_true", help="10 messages, 1 spawn each, teams of 1 and 4 (the smoke test)"
    )
    parser.add_argument("--claude-version", choices=rc.VERSIONS, default=rc.DEFAULT,
                        help="the real Claude Code to measure (default: %(default)s, today's)")  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--size-messages", type=int, default=40, help="messages per team size (1, 4, 8, 16)")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    messages, spawns = (10, 1) if args.quick else (args.messages, args.spawns)
    if shutil.which("tmux") is None:
        raise SystemExit("bench_team: needs tmux")
    if not AGENTTEAMS.exists():
        raise SystemExit(f"bench_team: no agentteams console script at {AGENTTEAMS}")
    version = args.claude_version
    rc.claude_bin(version)  # the real CLI: installed on first use; says how to install it when that fails
    signal.signal(signal.SIGTERM, lambda _s, _f: sys.exit(143))  # unwind: tmux servers, processes, temp dirs go
    started, load0 = time.monotonic(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-team-") as tmp:
        delivery: dict[Kind, Delivery] = {}
        for kind in DELIVERY:
            print(f"delivery: {kind} ...", file=sys.stderr, flush=True)
            delivery[kind] = run_delivery(kind, messages, Path(tmp) / f"delivery-{kind}", version)
        import bench_redis_delivery  # here: it builds on this module's labs

        redis_delivery = bench_redis_delivery.measure(messages, Path(tmp), version)  # None without redis-server
        spawn: dict[Kind, Spawn] = {}
        for kind in SPAWN:
            print(f"spawn: {kind} ...", file=sys.stderr, flush=True)
            spawn[kind] = run_spawn(kind, spawns, Path(tmp) / f"spawn-{kind}", version)
        print("spawn: ours, cold lead ...", file=sys.stderr, flush=True)
        cold = run_spawn("ours", spawns, Path(tmp) / "spawn-ours-cold", version, warm=False)
        # the smoke run (--quick) takes the two smallest teams and a short idle window: its figures are not judged
        sized = (5, (1, 4), 5.0) if args.quick else (args.size_messages, bench_sizes.SIZES, bench_sizes.IDLE_WINDOW)
        sizes = bench_sizes.measure(sized[0], Path(tmp) / "sizes", version, sized[1], sized[2])
        print("signing ...", file=sys.stderr, flush=True)
        signing = bench_signing.measure()  # in the same run as the spawns it adds to
        print("mid-turn delivery ...", file=sys.stderr, flush=True)
        import bench_steer  # here: it builds on this module's labs

        steer = bench_steer.measure(1 if args.quick else bench_steer.ROUNDS, Path(tmp), version)
        print("resume ...", file=sys.stderr, flush=True)
        resume = bench_resume.measure(1 if args.quick else 3)
    elapsed, load = time.monotonic() - started, (load0, os.getloadavg()[0])
    rows = build_rows(delivery, spawn, cold)
    print(f"teams: our teammate vs real Claude Code {version} vs a 500 ms poller ({os.cpu_count()} cores)")
    print_table(rows)
    for line in notes(delivery, spawn, cold, elapsed, load):
        print(f"* {line}")
    spawn_median = statistics.median(spawn["ours"].samples_ms)
    print("\nteam sizes, ours in tmux (delivery ms: send -> the request carrying it; spawn ms: Task -> first request)")
    bench_sizes.print_rows(sizes)
    print(f"\nsignatures, in the same run (our spawn median above: {spawn_median:.1f} ms)")
    bench_signing.print_rows(signing)
    print("\nmid-turn delivery (a message sent while the teammate runs the 2nd of 6 tool calls), in the same run")
    bench_steer.print_rows(steer)
    print("\na team outliving its lead, in the same run")
    bench_resume.print_rows(resume)
    bench_redis_delivery.print_rows(redis_delivery, delivery["ours"])
    if args.json:
        data = {
            "rows": [asdict(r) for r in rows],
            "delivery": {k: {**asdict(stats(v.samples_ms)), **asdict(v)} for k, v in delivery.items()},
            "spawn": {k: {**asdict(v), "median_ms": statistics.median(v.samples_ms)} for k, v in spawn.items()},
            "spawn_cold_lead": {**asdict(cold), "median_ms": statistics.median(cold.samples_ms)},
            "messages": messages, "spawns": spawns, "run_seconds": round(elapsed, 1), "load_average": load,
            "cores": os.cpu_count(), "claude_version": version, "signing": asdict(signing),
            "steer": {k: asdict(v) for k, v in steer.items()},
            "sizes": [asdict(x) for x in sizes],
            "resume": asdict(resume),
            "redis_delivery": bench_redis_delivery.as_json(redis_delivery),
        }  # fmt: skip
        args.json.write_text(json.dumps(data, indent=2))


if __name__ == "__main__":
    main()
