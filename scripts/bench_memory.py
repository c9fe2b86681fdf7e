"""What memory files (CLAUDE.md) add to a start: `agentteams -p` in a repository with them vs one without.

Usage: python scripts/bench_memory.py [--runs N] [--json PATH] [--check]

Both runs are measured in the same process, round-robin, against the project's scripted server (a one-turn
answer); each figure is the median wall time of N fresh processes. Also times the loader in-process.
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


def _run_once(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-300:]}")
    return elapsed


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
            _run_once(cmd, env, repo)
        for _ in range(runs):
            for name, (env, repo) in cases.items():
                samples[name].append(_run_once(cmd, env, repo))
        sent = [r["body"] for r in server.requests if r["path"].startswith("/v1/messages")]
    medians = {name: statistics.median(got) * 1000 for name, got in samples.items()}
    reached = any("# project" in json.dumps(b["messages"][0]) for b in sent)
    return {"none_ms": round(medians["none"], 1), "memory_ms": round(medians["memory"], 1),
            "extra_ms": round(medians["memory"] - medians["none"], 1), "memory_reached_model": reached}  # fmt: skip


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
    print(f"loader in-process: {loader['files']} files, {loader['bytes']} bytes: {loader['load_ms']:.3f} ms")
    starts = bench_starts(args.runs)
    print(f"agentteams -p, median of {args.runs} runs each (round-robin), one scripted answer:")
    print(f"  no memory files:   {starts['none_ms']:8.1f} ms")
    print(f"  with memory files: {starts['memory_ms']:8.1f} ms   (extra {starts['extra_ms']:+.1f} ms)")
    ok = starts["extra_ms"] <= TARGET_MS and starts["memory_reached_model"]
    print(f"target: memory files add at most {TARGET_MS:.0f} ms and reach the model: {'PASS' if ok else 'FAIL'}")
    if args.json:
        args.json.write_text(json.dumps({"loader": loader, "starts": starts, "ok": ok}, indent=2))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
