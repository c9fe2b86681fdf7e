"""An MCP server that writes garbage (issue 32, item 5): lines on its stdout that are not JSON-RPC, a traceback on its
stderr. Its tools still work, and all it costs is one warning line naming it: the `mcp` SDK's log of each bad line
(a traceback each, on our stderr) used to reach the terminal, 107 lines for a noisy server."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import result_text, script, tool, tool_results
from tests.support.mcp_lab import SERVER, config, wait_ready_command
from tests.support.team_run import lead_env

NOISE = "\n".join(f"garbage line {i}: not json {{" for i in range(20))
TRACEBACK = 'Traceback (most recent call last):\\n  File "server.py", line 1\\nValueError: boom'


def garbage_entry(ready: Path) -> dict[str, object]:
    """The test server, after 20 lines of garbage on its stdout and a traceback on its stderr."""
    real = shlex.join([sys.executable, str(SERVER), "--ready", str(ready)])
    line = f"printf '%s\\n' {shlex.quote(NOISE)}; printf '{TRACEBACK}\\n' >&2; exec {real}"
    return {"command": "sh", "args": ["-c", line]}


def test_a_server_writing_garbage_costs_one_warning_line(cli: Cli, config_root: Path, tmp_path: Path) -> None:
    work, ready = tmp_path / "work", tmp_path / "ready"
    work.mkdir()
    ready.mkdir()
    spec = script(tool("Bash", command=wait_ready_command(ready)), tool("mcp__noisy__echo", text="still"), "DONE")
    args = ["--mcp-config", config("noisy", garbage_entry(ready)), "--allowedTools", "Bash mcp__noisy"]
    with MockServer(spec) as server:
        proc = cli("-p", "go", *args, cwd=work, env=lead_env(config_root, server), timeout=90)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "DONE"
    _wait, echoed = tool_results(server)
    assert not echoed.get("is_error") and "still" in result_text(echoed), echoed
    # what the server cost: one line (the run's other warnings, if any, are not its doing)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("agentteams: warning: ")]
    said = [ln for ln in proc.stderr.splitlines() if "'noisy'" in ln or "JSONRPC" in ln or "garbage line" in ln]
    assert lines == [] and len(said) == 1, proc.stderr
    assert said[0].startswith("agentteams: warning: MCP server 'noisy'") and "garbage line 0" in said[0], said
