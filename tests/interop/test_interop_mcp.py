"""Interop tier, MCP: the real Claude Code CLI and ours, given the same scripted calls of a test MCP server's tools
(a result, a crash mid-call, the call after it), send tool results of the same shape back to the model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import script, tool, tool_results
from tests.support.mcp_lab import config, stdio_entry, wait_ready_command
from tests.support.team_run import lead_env

pytestmark = pytest.mark.timeout(120)


def shapes(results: list[dict[str, Any]]) -> list[tuple[str, bool, Any]]:
    """Each MCP result as (content's type, is_error, what it says with pids and ids left out)."""
    out = []
    for block in results[1:]:  # after the wait turn's Bash
        content = block["content"]
        said: Any = content
        if isinstance(content, str) and content.startswith("{"):
            said = {k: v.split(" (pid")[0] for k, v in json.loads(content).items()}
        out.append((type(content).__name__, bool(block.get("is_error")), said))
    return out


def run_both(
    claude: Path, version: str, cli: Cli, config_root: Path, tmp_path: Path
) -> dict[str, list[tuple[str, bool, Any]]]:
    got = {}
    for who in ("claude", "ours"):
        work, ready = tmp_path / who / "work", tmp_path / who / "ready"
        work.mkdir(parents=True)
        ready.mkdir()
        spec = script(tool("Bash", command=wait_ready_command(ready)), tool("mcp__srv__echo", text="hi"),
                      tool("mcp__srv__die"), tool("mcp__srv__echo", text="again"), "DONE")  # fmt: skip
        args = ["-p", "go", "--mcp-config", config("srv", stdio_entry(ready)), "--allowedTools", "Bash mcp__srv"]
        with MockServer(spec) as server:
            if who == "claude":
                cfg = tmp_path / "cc-config"
                rc.seed_home(cfg, [work], version)
                proc = subprocess.run([str(claude), *args], env=rc.claude_env(cfg, server.base_url), cwd=work,
                                         capture_output=True, text=True, timeout=90, check=False)  # fmt: skip
            else:
                proc = cli(*args, cwd=work, env=lead_env(config_root, server), timeout=90)
            assert proc.returncode == 0, (who, proc.stderr)
            got[who] = shapes(tool_results(server))
    return got


def test_mcp_tool_results_have_the_real_clis_shape(
    claude: Path, claude_version: str, cli: Cli, config_root: Path, tmp_path: Path
) -> None:
    got = run_both(claude, claude_version, cli, config_root, tmp_path)
    echo, died, again = got["claude"]
    assert echo == ("str", False, {"result": "echo: hi"}), got
    assert died[:2] == ("str", True) and "Connection closed" in died[2], got
    assert again == ("str", False, {"result": "echo: again"}), got  # it started the server again
    ours_echo, ours_died, ours_again = got["ours"]
    assert (ours_echo, ours_again) == (echo, again)
    assert ours_died[:2] == died[:2] and "Connection closed" in ours_died[2]
