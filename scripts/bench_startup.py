"""Cold-start time and memory of CLI commands against the typer+rich floor, what a user's Claude Code files add to
`--version` and to a `-p` start, `-p` end to end against the real `claude`'s, and request-prefix stability.

Usage: python scripts/bench_startup.py [--runs N] [--json PATH] [--check]

Commands are run round-robin (so load drifts hit every row alike); each figure is the median wall time
and peak RSS of N fresh processes. Every `-p` row but one runs cold (AGENTTEAMS_NO_WARM=1: the process imports
everything itself); the `warm server` row hands each run to the per-user warm server (agentteams.procs.warm.client),
started before the rounds in a runtime dir of the bench's own and checked to be the same process after them
(its RSS is the launcher's alone). The prefix check plays a 20-turn scripted session through the real
SDK against the project's scripted server and checks that each request's prefix, up to its last cache
breakpoint, is byte-identical in the next request (cache_control markers aside: they are metadata).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TARGET = 1.3
SETTINGS_TARGET_MS = 15.0  # what a Claude Code user's files may add to `--version` and a `-p` run (issue 12)
NO_SETTINGS, WITH_SETTINGS, EVERY_FILE = "-p, no settings files", "-p, 3 settings files", "-p, every user file"
WITH_MCP = "-p, an MCP server (2 s)"  # a stdio server (the `mcp` SDK) taking 2 s to start: -p waits for it
VERSION, VERSION_EVERY = "agentteams --version", "--version, every user file"
REAL_P = "claude -p hi (real CLI)"  # the real Claude Code, against the same scripted server, in the same run
WARM_P = "-p hi, warm server"  # ours, handed to the per-user warm server (running, checked before and after)
FIRST_P = "-p hi, first run"  # ours with no server yet: it runs cold at once and starts one (stopped after)
VS_REAL_TARGET = 0.5  # issue 13: our warm `-p` run at most half the real CLI's wall time (--check'd)


def _console_script() -> str:
    script = Path(sys.executable).with_name("agentteams")
    return str(script) if script.exists() else "agentteams"


def _run_once(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}")
    return elapsed, usage.ru_maxrss  # KiB on Linux


def _settings_files(root: Path, work: Path) -> None:
    """A user, a project and a local settings file (rules, env, model, hooks) as a Claude Code user has them."""
    rules = {"allow": [f"Bash(tool{i}:*)" for i in range(20)], "deny": ["Bash(rm:*)"], "ask": ["Bash(git:*)"]}
    # hooks on events a plain `-p hi` never reaches: what is measured is reading them, not running a script
    hook = [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "timeout": 5}]}]
    hooks = {"PreToolUse": hook, "PostToolUse": hook, "TeammateIdle": hook, "TaskCompleted": hook}
    (root / "settings.json").write_text(json.dumps({"permissions": rules, "env": {"BENCH_A": "1"}, "hooks": hooks}))
    (work / ".claude" / "settings.json").write_text(json.dumps({"model": "haiku", "permissions": rules}))
    (work / ".claude" / "settings.local.json").write_text(json.dumps({"env": {"BENCH_B": "2"}}))


def _markdown_files(root: Path, work: Path) -> None:
    """Memory (CLAUDE.md with an @import, CLAUDE.local.md, the user's), three custom agents and three custom
    commands in the project and in the config root."""
    (work / "CLAUDE.md").write_text("# Project\nUse pytest.\n@docs/style.md\n")
    (work / "docs").mkdir()
    (work / "docs" / "style.md").write_text("Four-space indents.\n" * 20)
    (work / "CLAUDE.local.md").write_text("My sandbox URL is local.\n")
    (root / "CLAUDE.md").write_text("Answer briefly.\n")
    for base in (work / ".claude", root):
        (base / "agents").mkdir()
        (base / "commands").mkdir()
        for i in range(3):
            front = f"---\nname: agent{i}\ndescription: Reviews part {i}\ntools: Read, Grep, Bash\nmodel: haiku\n---\n"
            (base / "agents" / f"agent{i}.md").write_text(front + "You review code.\n" * 10)
            command = f"---\ndescription: Command {i}\nargument-hint: [file]\n---\nLook at $ARGUMENTS.\n"
            (base / "commands" / f"cmd{i}.md").write_text(command)


def _projects(tmp: Path, env: dict[str, str], base_url: str) -> dict[str, tuple[dict[str, str], Path]]:
    """Scratch projects for a `-p` run against the scripted server, each with its own config root: a bare one,
    one with the three settings files, one with every file a Claude Code user may have (settings with
    hooks, memory with an import, custom agents and commands), and a bare one with an MCP server configured."""
    out = {}
    for name, settings, markdown in ((NO_SETTINGS, False, False), (WITH_SETTINGS, True, False),
                                     (EVERY_FILE, True, True), (WITH_MCP, False, False)):  # fmt: skip
        root, work = tmp / name.replace(" ", "-") / "cfg", tmp / name.replace(" ", "-") / "work"
        (work / ".claude").mkdir(parents=True)
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(work)], check=True)  # memory is read up to the repository root
        if settings:
            _settings_files(root, work)
        if markdown:
            _markdown_files(root, work)
        if name == WITH_MCP:
            server = [str(ROOT / "tests" / "support" / "mcp_server.py"), "--delay", "2"]
            mcp = {"mcpServers": {"slow": {"command": sys.executable, "args": server}}}
            (work / ".claude" / "settings.json").write_text(json.dumps(mcp))
        run_env = {**env, "CLAUDE_CONFIG_DIR": str(root), "ANTHROPIC_BASE_URL": base_url,
                   "ANTHROPIC_API_KEY": "bench-key-not-secret"}  # fmt: skip
        out[name] = (run_env, work)
    return out


def _real_claude(tmp: Path, base_url: str) -> tuple[list[str], dict[str, str], Path] | None:
    """`claude -p hi` offline against the scripted server (the pinned version, as the interop tests run it), in
    a scratch project and config root of its own; None when it is not installed (nothing is installed here)."""
    from tests.support import realclaude

    version = realclaude.DEFAULT
    if realclaude.installed_version(realclaude.prefix(version)) != version and not os.environ.get(
        realclaude.override_var(version)
    ):
        return None
    work, config = tmp / "real-claude" / "work", tmp / "real-claude" / "cfg"
    work.mkdir(parents=True)
    realclaude.seed_home(config, [work], version)
    return [str(realclaude.claude_bin(version)), "-p", "hi"], realclaude.claude_env(config, base_url), work


class _WarmServer:
    """The warm `-p` server in a runtime dir of the bench's own: started by a first run, awaited, checked, stopped."""

    def __init__(self, env: dict[str, str]) -> None:
        from agentteams.procs.warm import client as warm

        self.runtime = Path(tempfile.mkdtemp(prefix="bw-", dir="/tmp"))  # short enough for an AF_UNIX path
        self.env = {k: v for k, v in env.items() if k != warm.DISABLE_VAR} | {"XDG_RUNTIME_DIR": str(self.runtime)}
        key = warm.install_key(self.env)  # the console script's: this interpreter, this source, this environment
        self.lock = warm.lock_path(self.runtime / "agentteams", key)
        self.sock = warm.socket_path(self.runtime / "agentteams", key)
        self.pid = 0

    def _holder(self) -> int:
        try:
            return int(self.lock.read_text().strip() or 0)
        except (OSError, ValueError):
            return 0

    def start(self, cli: str, cwd: Path) -> tuple[float, int]:
        """A first run, which runs cold and starts the server, then the server awaited; the run's timing."""
        import socket

        first = _run_once([cli, "-p", "hi"], self.env, cwd)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with socket.socket(socket.AF_UNIX) as s:
                if s.connect_ex(str(self.sock)) == 0 and self._holder():
                    self.pid = self._holder()
                    return first
            time.sleep(0.05)
        raise RuntimeError("the warm server did not start in 120 s")

    def check(self) -> None:
        """The same server served every round: none of the warm row's runs started one (a cold run would)."""
        if self._holder() != self.pid or not Path(f"/proc/{self.pid}").exists():
            raise RuntimeError(f"the warm server {self.pid} was replaced during the rounds: the warm row is not warm")

    def stop(self) -> None:
        from agentteams.pids import pid_alive

        pid = self._holder()
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.02)
        shutil.rmtree(self.runtime, ignore_errors=True)


def _first_runs(cli: str, env: dict[str, str], cwd: Path, n: int) -> list[tuple[float, int]]:
    """`n` first runs, each with no server yet (a runtime dir of its own), each server stopped after."""
    got = []
    for _ in range(n):
        server = _WarmServer(env)
        try:
            got.append(server.start(cli, cwd))
        finally:
            server.stop()
    return got


def bench_commands(runs: int) -> list[dict[str, Any]]:
    from agentteams.mockapi import MockServer

    exe, cli = sys.executable, _console_script()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp, MockServer({"fallback": "ok"}) as server:
        # as a user runs it: with bytecode written (pip compiles it at install time)
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "PYTHONDONTWRITEBYTECODE")}
        env["CLAUDE_CONFIG_DIR"] = tmp
        env["AGENTTEAMS_NO_WARM"] = "1"  # cold unless a row says warm
        subprocess.run([exe, "-m", "compileall", "-q", str(ROOT / "agentteams")], env=env, check=True)
        subprocess.run([cli, "team", "create", "bench"], env=env, check=True, capture_output=True)
        for i in range(5):
            subprocess.run([cli, "task", "create", "bench", f"task {i}"], env=env, check=True, capture_output=True)
        cases = {
            "python -c pass": [exe, "-c", "pass"],
            "floor: import typer, rich": [exe, "-c", "import typer, rich"],
            "import anthropic": [exe, "-c", "import anthropic"],
            "agentteams --version": [cli, "--version"],
            "agentteams --help": [cli, "--help"],
            "agentteams task list": [cli, "task", "list", "bench"],
        }
        where: dict[str, tuple[dict[str, str], Path | None]] = dict.fromkeys(cases, (env, None))
        projects = _projects(Path(tmp), env, server.base_url)
        for name, place in projects.items():
            cases[name], where[name] = [cli, "-p", "hi"], place
        cases[VERSION_EVERY], where[VERSION_EVERY] = [cli, "--version"], projects[EVERY_FILE]
        warm = _WarmServer(projects[NO_SETTINGS][0])
        cases[WARM_P], where[WARM_P] = [cli, "-p", "hi"], (warm.env, projects[NO_SETTINGS][1])
        real = _real_claude(Path(tmp), server.base_url)
        if real is not None:
            cases[REAL_P], where[REAL_P] = real[0], (real[1], real[2])
        samples: dict[str, list[tuple[float, int]]] = {name: [] for name in cases}
        try:
            warm.start(cli, projects[NO_SETTINGS][1])
            for name, cmd in cases.items():  # warm the page cache once
                _run_once(cmd, *where[name])
            samples[FIRST_P] = []
            for _ in range(runs):
                for name, cmd in cases.items():
                    samples[name].append(_run_once(cmd, *where[name]))
                samples[FIRST_P] += _first_runs(cli, *projects[NO_SETTINGS], 1)  # in the round: the same load
            warm.check()
        finally:
            warm.stop()
    floor = statistics.median(t for t, _ in samples["floor: import typer, rich"])
    rows = []
    for name, got in samples.items():
        ms = statistics.median(t for t, _ in got) * 1000
        rows.append({"command": name, "median_ms": round(ms, 1), "rss_mb": round(max(r for _, r in got) / 1024, 1),
                     "vs_floor": round(ms / (floor * 1000), 2)})  # fmt: skip
    return rows


# what a `-p` start does with a user's files, timed inside a fresh interpreter (bytecode kept) after what every
# start imports anyway (the session and its modules): what is left is reading the files and the imports they cause
_READ_FILES = """
import sys, time
from pathlib import Path
from agentteams.agent.session import Session
from agentteams.agent.hooks.points import HookPoints
from agentteams.agent.memory import load_memory
from agentteams.settings.agents import load_agents
from agentteams.settings.load import load_settings
from agentteams.store.paths import Layout
t = time.perf_counter()
cwd, root = Path.cwd(), Layout.from_env().root
settings = load_settings(cwd)
load_memory(cwd, root)
load_agents(cwd, root)
HookPoints.build(settings, cwd=cwd, session_id="s", transcript_path="t", permission_mode=lambda: "default")
print((time.perf_counter() - t) * 1000)
"""


def bench_reading(runs: int) -> dict[str, float]:
    """Milliseconds a fresh interpreter spends reading a user's files (settings, memory, agents, hook set-up, with the
    imports only files cause), in a bare project and in one with every file: a whole `-p` start varies by more."""
    with tempfile.TemporaryDirectory(prefix="bench-reading-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "PYTHONDONTWRITEBYTECODE")}
        projects = _projects(Path(tmp), env, "http://127.0.0.1:9")
        samples: dict[str, list[float]] = {NO_SETTINGS: [], EVERY_FILE: []}
        for _ in range(runs):
            for name, got in samples.items():
                run_env, work = projects[name]
                out = subprocess.run([sys.executable, "-c", _READ_FILES], env=run_env, cwd=work, check=True,
                                     capture_output=True, text=True).stdout  # fmt: skip
                got.append(float(out))
    return {name: round(statistics.median(got), 2) for name, got in samples.items()}


def bench_prefix(turns: int = 20) -> dict[str, Any]:
    """Play `turns` model calls through the real client and server; compare consecutive request prefixes."""
    from agentteams.agent.session import Session, SessionOptions
    from agentteams.mockapi import MockServer
    from agentteams.model.anthropic_client import AnthropicClient
    from agentteams.model.config import ModelConfig

    with tempfile.TemporaryDirectory(prefix="bench-prefix-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "a.txt").write_text("hello\n")
        calls = [{"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "a.txt"}}]}] * (turns - 1)
        script = {"routes": [{"name": "main", "match": {"tools": True}, "turns": [*calls, "done"]}]}
        with MockServer(script) as server:
            os.environ["CLAUDE_CONFIG_DIR"] = str(Path(tmp) / "cfg")
            config = ModelConfig(api_key="bench-key-not-secret", base_url=server.base_url)
            session = Session(SessionOptions(cwd=work, model="haiku"), AnthropicClient(config))
            session.run("read a.txt repeatedly")
            bodies = [r["body"] for r in server.requests if r["path"].startswith("/v1/messages")]
        usage = session.ledger.total().usage
    stable = sum(_prefix_kept(a, b) for a, b in itertools.pairwise(bodies))
    breakpoints = [_count_breakpoints(b) for b in bodies]
    return {"requests": len(bodies), "stable_transitions": stable, "transitions": len(bodies) - 1,
            "breakpoints_min": min(breakpoints), "breakpoints_max": max(breakpoints),
            "cache_read_tokens": usage.cache_read_input_tokens, "input_tokens": usage.input_tokens,
            "cache_creation_tokens": usage.cache_creation_input_tokens}  # fmt: skip


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _prefix_kept(body: dict[str, Any], following: dict[str, Any]) -> bool:
    """Tools, system and every message of `body` reappear unchanged at the start of `following`."""
    n = len(body["messages"])
    mine = json.dumps(_strip([body["tools"], body["system"], body["messages"]]), sort_keys=False)
    theirs = json.dumps(_strip([following["tools"], following["system"], following["messages"][:n]]))
    return mine == theirs


def _count_breakpoints(obj: Any) -> int:
    if isinstance(obj, dict):
        return int("cache_control" in obj) + sum(_count_breakpoints(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(_count_breakpoints(v) for v in obj)
    return 0


def _print_vs_real(ms: dict[str, float]) -> dict[str, float] | None:
    """Our `-p hi` (no settings files), warm and cold, over the real CLI's, process start to exit in the same run."""
    if REAL_P not in ms:
        print("\n-p end to end vs the real claude: not measured (the real CLI is not installed)")
        return None
    ratios = {"warm": round(ms[WARM_P] / ms[REAL_P], 2), "cold": round(ms[NO_SETTINGS] / ms[REAL_P], 2)}
    print(f"\n-p hi end to end (start to exit, scripted server answering at once), real claude {ms[REAL_P]:.0f} ms:")
    print(f"  agentteams, warm server   {ms[WARM_P]:6.0f} ms: {ratios['warm']:.2f}x the real CLI "
          f"(target <= {VS_REAL_TARGET:g}x)")  # fmt: skip
    print(f"  agentteams, cold          {ms[NO_SETTINGS]:6.0f} ms: {ratios['cold']:.2f}x (AGENTTEAMS_NO_WARM=1)")
    first = ms[FIRST_P] / ms[REAL_P]
    print(f"  agentteams, first run     {ms[FIRST_P]:6.0f} ms: {first:.2f}x (no server yet: it starts one and hands "
          f"itself to it)")  # fmt: skip
    return ratios


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    rows = bench_commands(args.runs)
    print(f"start to exit, median of {args.runs} runs each (round-robin), Python {sys.version.split()[0]}; every row "
          f"is a cold process but `{WARM_P}` (handed to the running warm server; RSS: the launcher's) and "
          f"`{FIRST_P}` (no server yet: starts one and hands itself to it)")  # fmt: skip
    print(f"{'command':<28} {'median ms':>10} {'peak RSS MB':>12} {'vs floor':>9}")
    for r in rows:
        print(f"{r['command']:<28} {r['median_ms']:>10.1f} {r['rss_mb']:>12.1f} {r['vs_floor']:>8.2f}x")
    prefix = bench_prefix()
    print(f"\nrequest prefix over a {prefix['requests']}-request scripted session (real SDK, scripted server):")
    print(f"  prefix kept byte-identical: {prefix['stable_transitions']}/{prefix['transitions']} transitions; "
          f"cache breakpoints per request: {prefix['breakpoints_min']}-{prefix['breakpoints_max']}")  # fmt: skip
    print(f"  tokens: {prefix['cache_read_tokens']} read from cache, {prefix['cache_creation_tokens']} written, "
          f"{prefix['input_tokens']} uncached")  # fmt: skip
    ours = [r for r in rows if r["command"].startswith("agentteams")]
    ms = {r["command"]: r["median_ms"] for r in rows}
    reading = bench_reading(args.runs)
    extra = {
        "every user file, --version": round(ms[VERSION_EVERY] - ms[VERSION], 1),
        "every user file, read at -p": round(reading[EVERY_FILE] - reading[NO_SETTINGS], 1),
    }
    whole = {"settings files, whole -p": round(ms[WITH_SETTINGS] - ms[NO_SETTINGS], 1),
             "every user file, whole -p": round(ms[EVERY_FILE] - ms[NO_SETTINGS], 1),
             "an MCP server, whole -p": round(ms[WITH_MCP] - ms[NO_SETTINGS], 1)}  # fmt: skip
    print(f"\nwhat a user's files add (target: at most {SETTINGS_TARGET_MS:g} ms each, same run):")
    print(f"  {'every user file, --version':<30} {extra['every user file, --version']:>6.1f} ms")
    print(
        f"  {'every user file, read at -p':<30} {extra['every user file, read at -p']:>6.1f} ms   (reading them in a "
        f"fresh interpreter: {reading[EVERY_FILE]:.1f} ms vs {reading[NO_SETTINGS]:.1f} ms in a bare project)"
    )
    for what, added in whole.items():  # a whole -p start (~the SDK's import) varies by more than the files cost
        note = "whole starts: noise of tens of ms"
        if what.startswith("an MCP"):
            note = "-p waits for the server: its 2 s and the SDK's import"
        print(f"  {what:<30} {added:>6.1f} ms   ({note})")
    vs_real = _print_vs_real(ms)
    ok = all(r["vs_floor"] <= TARGET for r in ours) and prefix["stable_transitions"] == prefix["transitions"]
    ok = ok and all(added <= SETTINGS_TARGET_MS for added in extra.values())
    ok = ok and (vs_real is None or vs_real["warm"] <= VS_REAL_TARGET)
    print(f"\ntarget: every agentteams command within {TARGET}x of the floor, every prefix kept, settings cheap, "
          f"warm -p <= {VS_REAL_TARGET:g}x the real CLI: {'PASS' if ok else 'FAIL'}")  # fmt: skip
    if args.json:
        out = {"commands": rows, "prefix": prefix, "files_ms": extra, "whole_ms": whole, "reading_ms": reading,
               "vs_real": vs_real, "ok": ok}  # fmt: skip
        args.json.write_text(json.dumps(out, indent=2))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
