"""How long a slow MCP server holds up the first model request: ours against the real Claude Code CLI, same run.

Usage: python scripts/bench_mcp.py [--runs N] [--delay S]

Each row runs `-p` against the project's scripted Messages API with one stdio MCP server (tests/support/mcp_server.py)
that waits `--delay` seconds before serving, and measures, from the process start, when the first main-agent
request (one with tools) arrives, whether it already offers the server's tools (as tools, or as the real CLI's
deferred-tool names), and when the process exits. The
`no MCP server` rows are the floor. Runs alternate between the CLIs; figures are medians (load average printed).
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
SERVER = ROOT / "tests" / "support" / "mcp_server.py"


def _config(delay: float) -> str:
    args = [str(SERVER), "--delay", str(delay)]
    return json.dumps({"mcpServers": {"slow": {"command": sys.executable, "args": args}}})


def _ours(tmp: Path, base_url: str) -> tuple[list[str], dict[str, str], Path]:
    work = tmp / "ours" / "work"
    work.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    env.update({"CLAUDE_CONFIG_DIR": str(tmp / "ours" / "cfg"), "ANTHROPIC_BASE_URL": base_url,
                "ANTHROPIC_API_KEY": "bench-key-not-secret", "AGENTTEAMS_NO_WARM": "1"})  # fmt: skip
    return [str(Path(sys.executable).with_name("agentteams")), "-p", "hi"], env, work


def _real(tmp: Path, base_url: str) -> tuple[list[str], dict[str, str], Path] | None:
    from tests.support import realclaude

    version = realclaude.DEFAULT
    if realclaude.installed_version(realclaude.prefix(version)) != version:
        return None
    work, config = tmp / "real" / "work", tmp / "real" / "cfg"
    work.mkdir(parents=True, exist_ok=True)
    realclaude.seed_home(config, [work], version)
    return [str(realclaude.claude_bin(version)), "-p", "hi"], realclaude.claude_env(config, base_url), work


def _one(cmd: list[str], env: dict[str, str], work: Path, mcp: str | None) -> dict[str, Any]:
    from agentteams.mockapi import MockServer

    turn = {"content": [{"type": "text", "text": "ok"}]}
    script = {"routes": [{"name": "main", "match": {"tools": True}, "turns": [turn]}], "fallback": "ok"}
    with MockServer(script) as server:
        env = {**env, "ANTHROPIC_BASE_URL": server.base_url}
        argv = [*cmd, *(["--mcp-config", mcp] if mcp else [])]
        start = time.time()
        proc = subprocess.run(argv, env=env, cwd=work, capture_output=True, text=True, timeout=120, check=False)
        wall = time.time() - start
        main = [r for r in server.requests if r["path"].startswith("/v1/messages")
                and isinstance(r.get("body"), dict) and r["body"].get("tools")]  # fmt: skip
    if proc.returncode != 0 or not main:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    # offered: as a tool, or (the real CLI) named among the deferred tools ToolSearch loads
    return {"first": main[0]["ts"] - start, "wall": wall, "offered": "mcp__slow__" in json.dumps(main[0]["body"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delay", type=float, default=5.0)
    args = parser.parse_args()
    rows: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp_name:
        tmp = Path(tmp_name)
        clis = {"agentteams": _ours(tmp, ""), "claude (real)": _real(tmp, "")}
        for _ in range(args.runs):
            for label, cli in clis.items():
                if cli is None:
                    continue
                slow = (f"server taking {args.delay:g} s", _config(args.delay))
                for mcp_label, mcp in (("no MCP server", None), slow):
                    rows.setdefault(f"{label}, {mcp_label}", []).append(_one(*cli, mcp))
    print(f"load average {os.getloadavg()[0]:.2f}, {args.runs} runs each, medians")
    print(f"{'run':<40} {'first request':>14} {'tools offered':>14} {'exit':>8}")
    for label, runs in rows.items():
        first = statistics.median(r["first"] for r in runs)
        wall = statistics.median(r["wall"] for r in runs)
        offered = sum(r["offered"] for r in runs)
        print(f"{label:<40} {first * 1000:>11.0f} ms {offered:>8}/{len(runs):<5} {wall * 1000:>5.0f} ms")
    if "claude (real)" not in " ".join(rows):
        print("(the real claude is not installed: run .ci/run to compare)")


if __name__ == "__main__":
    main()
