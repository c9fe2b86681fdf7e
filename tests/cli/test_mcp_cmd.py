"""`agentteams mcp` on claude's files, with real MCP servers (tests/support/mcp_server.py, the official `mcp` SDK):
add in each scope, list and get connect to them, remove; claude's refusals; the state file's other keys kept, and a
state file we cannot read left as it is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.cli import Cli
from tests.support.mcp_lab import SERVER, http_server


def _state(config_root: Path) -> dict[str, object]:
    data = json.loads((config_root / ".claude.json").read_text())
    assert isinstance(data, dict)
    return data


def test_add_in_each_scope_then_list_connects_to_them(cli: Cli, config_root: Path, work: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (config_root / ".claude.json").write_text(json.dumps({"theirs": {"a": 1}, "projects": {"/x": {"y": 2}}}))
    sub = work / "sub"
    sub.mkdir()
    ready = tmp_path / "ready"
    ready.mkdir()
    with http_server(ready) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        added = cli("mcp", "add", "loc", "-e", "A=1", "B=2", "--", sys.executable, str(SERVER), cwd=sub)
        assert added.returncode == 0, added.stderr
        assert added.stdout.splitlines() == [
            f"Added stdio MCP server loc with command: {sys.executable} {SERVER} to local config",
            f"File modified: {config_root / '.claude.json'} [project: {work}]",  # the repository's root
        ]
        web = cli("mcp", "add", "-s", "user", "-t", "http", "web", url, "-H", "Authorization: Bearer t0k", cwd=sub)
        assert '"Authorization": "[REDACTED]"' in web.stdout and "t0k" not in web.stdout
        assert cli("mcp", "add-json", "-s", "project", "proj", json.dumps({"command": "nope"}), cwd=sub).returncode == 0
        assert cli("mcp", "add", "gone", "--", str(tmp_path / "missing"), cwd=sub).returncode == 0
        listed = cli("mcp", "list", cwd=sub)
        got = web_again = cli("mcp", "get", "web", cwd=sub)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[:2] == ["Checking MCP server health\u2026", ""]
    assert lines[2] == f"web: {url} (HTTP) - \u2714 Connected"  # user first, then project, then local
    assert lines[3] == "proj: nope  - \u23f8 Pending approval (run `claude` to approve)"  # never started
    assert lines[4] == f"loc: {sys.executable} {SERVER} - \u2714 Connected"
    assert lines[5].startswith("gone: ") and "\u2718 Failed to connect \u2014 " in lines[5]
    assert got.returncode == 0 and "  Status: \u2714 Connected" in web_again.stdout
    assert "  Scope: User config (available in all your projects)" in got.stdout
    state = _state(config_root)
    assert state["theirs"] == {"a": 1} and state["projects"]["/x"] == {"y": 2}  # type: ignore[index]
    local = state["projects"][str(work)]["mcpServers"]["loc"]  # type: ignore[index]
    assert local == {"type": "stdio", "command": sys.executable, "args": [str(SERVER)], "env": {"A": "1", "B": "2"}}
    assert state["mcpServers"] == {"web": {"type": "http", "url": url, "headers": {"Authorization": "Bearer t0k"}}}
    assert json.loads((sub / ".mcp.json").read_text()) == {"mcpServers": {"proj": {"command": "nope", "args": []}}}


def test_claudes_refusals_and_removal(cli: Cli, config_root: Path, work: Path) -> None:
    def run(*args: str) -> tuple[int, str, str]:
        proc = cli(*args, cwd=work)
        return proc.returncode, proc.stdout.strip(), proc.stderr.strip()

    assert run("mcp", "add", "a", "--", "x")[0] == 0
    assert run("mcp", "add", "a", "--", "y") == (1, "", "MCP server a already exists in local config")
    assert run("mcp", "add", "-s", "nope", "b", "--", "x")[2].startswith("Invalid scope: nope. Must be one of: local")
    assert run("mcp", "add", "-s", "dynamic", "b", "--", "x")[2] == "Cannot add MCP server to scope: dynamic"
    assert run("mcp", "add", "-t", "ws", "b", "u")[2].startswith("Invalid transport type: ws.")
    assert run("mcp", "add", "b c", "--", "x")[2].startswith("Invalid name b c.")
    assert run("mcp", "add", "b", "-e", "NOEQ", "--", "x")[2].startswith("Invalid environment variable format: NOEQ")
    assert run("mcp", "add-json", "b", "[1]")[2].startswith("Invalid configuration: not a JSON object.")
    assert run("mcp", "add", "-s", "user", "a", "--", "x")[0] == 0
    code, _, err = run("mcp", "remove", "a")
    assert code == 1 and err.startswith('MCP server "a" exists in multiple scopes:')
    assert run("mcp", "remove", "-s", "project", "a") == (1, "", 'No MCP server named "a" in project scope')
    code, out, _ = run("mcp", "remove", "-s", "user", "a")
    assert (code, out.splitlines()[0]) == (0, "Removed MCP server a from user config")
    code, out, _ = run("mcp", "remove", "a")
    assert (code, out.splitlines()[0]) == (0, 'Removed MCP server "a" from local config')
    assert run("mcp", "get", "a")[2] == 'No MCP server named "a". Run `agentteams mcp add` to add one.'


def test_a_state_file_we_cannot_read_is_left_alone(cli: Cli, config_root: Path, work: Path) -> None:
    broken = '{"userID": "abc", "projects": {'  # claude's file, cut short
    (config_root / ".claude.json").write_text(broken)
    proc = cli("mcp", "add", "a", "--", "x", cwd=work)
    assert proc.returncode == 1 and "is not valid JSON" in proc.stderr
    assert (config_root / ".claude.json").read_text() == broken
