"""What memory files (CLAUDE.md) add to a start: `agentteams -p` in a repository with them vs one without.

Usage: python scripts/bench_memory.py [--runs N] [--json PATH] [--check]

Both are measured in the same run, round-robin, against the project's scripted server; each figure is the
median over N fresh processes of the time from the start to the first model request (what a start costs).
A whole start varies by far more than memory costs, so the loader and its import are also timed alone, and
the target is judged on those.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TARGET_MS = 15.0  # the budget for everything a user's Claude Code files add to a start


def _console_script() -> str:
    script = Path(sys.executable).with_name("agentteams")
    return str(script) if script.exists() else "agentteams"


def make_repo(base: Path, with_memory: bool) -> tuple[Path, Path]:
    """(config root, repository) in `base`; with every kind of memory file, or none."""
    cfg, repo = base / "cfg", base / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / ".claude").mkdir()
    cfg.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    if with_memory:
        line = "- keep functions short and name them by what they return\n" * 40  # ~2.4 KB each, a realistic size
        (cfg / "CLAUDE.md").write_text("# mine\n" + line)
        (repo / "CLAUDE.md").write_text("# project\nStyle: @docs/style.md\n" + line)
        (repo / "docs" / "style.md").write_text("# style\n" + line)
        (repo / ".claude" / "CLAUDE.md").write_text("# more\n" + line)
        (repo / "CLAUDE.local.md").write_text("# local\n" + line)
    return cfg, repo


def _run_once(cmd: list[str], env: dict[str, str], cwd: Path, server: Any) -> float:
    """Seconds from the start to the server's first request of this run."""
    before = len(server.requests)
    start = time.time()  # the server's log has wall-clock timestamps
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-300:]}")
    return float(server.requests[before]["ts"]) - start


def bench_starts(runs: int) -> dict[str, Any]:
    from agentteams.mockapi import MockServer

    script = {"routes": [{"name": "main", "match": {}, "turns": [], "idle": "ok"}]}
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp, MockServer(script) as server:
        cases = {}
        for name, with_memory in (("none", False), ("memory", True)):
            cfg, repo = make_repo(Path(tmp) / name, with_memory)
            env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "PYTHONDONTWRITEBYTECODE")}
            env.update(CLAUDE_CONFIG_DIR=str(cfg), ANTHROPIC_BASE_URL=server.base_url,
                       ANTHROPIC_API_KEY="bench-key-not-secret")  # fmt: skip
            cases[name] = (env, repo)
        cmd = [_console_script(), "-p", "say ok"]
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for env, repo in cases.values():  # warm the page cache once
            _run_once(cmd, env, repo, server)
        for _ in range(runs):
            for name, (env, repo) in cases.items():
                samples[name].append(_run_once(cmd, env, repo, server))
        sent = [r["body"] for r in server.requests if r["path"].startswith("/v1/messages")]
    medians = {name: statistics.median(got) * 1000 for name, got in samples.items()}
    reached = any("# project" in json.dumps(b["messages"][0]) for b in sent)
    return {"none_ms": round(medians["none"], 1), "memory_ms": round(medians["memory"], 1),
            "extra_ms": round(medians["memory"] - medians["none"], 1), "memory_reached_model": reached}  # fmt: skip


def bench_import(runs: int = 7) -> float:
    """Milliseconds to import the memory module in a fresh interpreter, its dependencies already imported."""
    code = ("import time, re, os, stat, dataclasses, pathlib, typing, agentteams.diagnostics\n"
            "t = time.perf_counter(); import agentteams.agent.memory\n"
            "print((time.perf_counter() - t) * 1000)")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: bytecode kept
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "agentteams")], env=env, check=True)
    got = [float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                check=True).stdout) for _ in range(runs)]  # fmt: skip
    return round(statistics.median(got), 3)


def bench_loader(repeat: int = 200) -> dict[str, Any]:
    """The loader alone, in-process: what it costs once the interpreter is up."""
    from agentteams.agent.memory import load_memory

    with tempfile.TemporaryDirectory(prefix="bench-memory-load-") as tmp:
        cfg, repo = make_repo(Path(tmp), True)
        start = time.perf_counter()
        for _ in range(repeat):
            loaded = load_memory(repo, cfg)
        per = (time.perf_counter() - start) / repeat
    return {"files": len(loaded.files), "bytes": sum(f.size for f in loaded.files), "load_ms": round(per * 1000, 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    args = ap.parse_args(argv)
    loader = bench_loader()
    loader["import_ms"] = bench_import()
    cost = loader["load_ms"] + loader["import_ms"]
    print(f"loader in-process: {loader['files']} files, {loader['bytes']} bytes: {loader['load_ms']:.3f} ms; "
          f"importing it: {loader['import_ms']:.3f} ms")  # fmt: skip
    starts = bench_starts(args.runs)
    print(f"agentteams -p, start to first model request, median of {args.runs} runs each (round-robin):")
    print(f"  no memory files:   {starts['none_ms']:8.1f} ms")
    print(f"  with memory files: {starts['memory_ms']:8.1f} ms   (difference {starts['extra_ms']:+.1f} ms: noise)")
    ok = cost <= TARGET_MS and starts["memory_reached_model"]
    print(f"target: memory costs a start at most {TARGET_MS:.0f} ms ({cost:.1f} ms: load + import) and reaches the "
          f"model: {'PASS' if ok else 'FAIL'}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"loader": loader, "starts": starts, "cost_ms": cost, "ok": ok}, indent=2))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
