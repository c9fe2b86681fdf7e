"""MCP servers end to end: `agentteams -p` as a real process against the scripted Messages API, with the test MCP
server (the `mcp` SDK) as a real stdio or streamable HTTP process, configured by --mcp-config (JSON or file),
the project's approved .mcp.json, or settings; rules, hooks, a crash mid-session and a slow start (waited for)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import result_text, script, tool, tool_results
from tests.support.mcp_lab import config, http_server, stdio_entry, wait_ready_command
from tests.support.team_run import lead_env


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    (d / ".claude").mkdir(parents=True)
    return d


@pytest.fixture
def ready(tmp_path: Path) -> Path:
    d = tmp_path / "ready"
    d.mkdir()
    return d


def tool_names(record: dict[str, Any]) -> list[str]:
    return [t["name"] for t in record["body"]["tools"]]


def echoed(block: dict[str, Any]) -> str:
    """What the echo tool said: its structured content, sent as compact JSON (as Claude Code 2.1.330 sends it)."""
    assert not block.get("is_error"), block
    said: str = json.loads(result_text(block))["result"]
    return said


def main_requests(server: MockServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if r["path"].startswith("/v1/messages") and isinstance(r.get("body"), dict)]


def configure(how: str, work: Path, entry: dict[str, Any]) -> list[str]:
    """Put the `srv` server where `how` says; the extra command-line arguments that takes."""
    if how == "flag-json":
        return ["--mcp-config", config("srv", entry)]
    if how == "flag-file":
        (work / "servers.json").write_text(config("srv", entry))
        return ["--mcp-config", "servers.json"]
    if how == "project":  # .mcp.json, approved as Claude Code asks: enabledMcpjsonServers in the local settings
        (work / ".mcp.json").write_text(config("srv", entry))
        (work / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": ["srv"]}))
        return []
    # "user": where `claude mcp add -s user` keeps it (a settings file's `mcpServers` is read by neither CLI)
    state = Path(os.environ["CLAUDE_CONFIG_DIR"]) / ".claude.json"
    state.write_text(json.dumps({"mcpServers": {"srv": entry}}))
    return []


def run(
    cli: Cli, config_root: Path, work: Path, server: MockServer, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return cli("-p", "go", *args, cwd=work, env={**lead_env(config_root, server), **(env or {})}, timeout=90)


@pytest.mark.parametrize("how", ["flag-json", "flag-file", "project", "user"])
def test_the_lead_calls_a_stdio_servers_tool_configured_each_way(
    cli: Cli, config_root: Path, work: Path, ready: Path, how: str
) -> None:
    args = configure(how, work, stdio_entry(ready))
    spec = script(tool("Bash", command=wait_ready_command(ready)), tool("mcp__srv__echo", text="hi"), "DONE")
    with MockServer(spec) as server:
        proc = run(cli, config_root, work, server, *args, "--allowedTools", "Bash mcp__srv")  # a server-wide rule
        requests = main_requests(server)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "DONE"
    assert echoed(tool_results(server)[1]).startswith("echo: hi (pid ")
    names = tool_names(requests[1])  # the built-ins first, then the server's tools sorted: a stable prefix
    assert names[-3:] == ["mcp__srv__die", "mcp__srv__echo", "mcp__srv__write"]  # after every built-in
    assert not [n for n in names[:-3] if n.startswith("mcp__")] and "Bash" in names[:-3]


def test_an_unapproved_project_server_is_not_started(cli: Cli, config_root: Path, work: Path, ready: Path) -> None:
    (work / ".mcp.json").write_text(config("srv", stdio_entry(ready)))
    with MockServer(script("DONE")) as server:
        proc = run(cli, config_root, work, server)
        requests = main_requests(server)
    assert proc.returncode == 0, proc.stderr
    assert not any(n.startswith("mcp__") for n in tool_names(requests[0]))
    assert list(ready.iterdir()) == []


def test_a_streamable_http_server_with_an_expanded_url(cli: Cli, config_root: Path, work: Path, ready: Path) -> None:
    with http_server(ready) as port:
        entry = {"type": "http", "url": "http://127.0.0.1:${MCP_TEST_PORT}/mcp", "headers": {"X-Test": "${NOPE:-x}"}}
        spec = script(tool("Bash", command=wait_ready_command(ready)), tool("mcp__web__echo", text="over http"), "DONE")
        args = ["--mcp-config", config("web", entry), "--allowedTools", "Bash mcp__web__*"]  # an anchored wildcard
        with MockServer(spec) as server:
            proc = run(cli, config_root, work, server, *args, env={"MCP_TEST_PORT": str(port)})
    assert proc.returncode == 0, proc.stderr
    assert echoed(tool_results(server)[1]).startswith("echo: over http")


def test_a_deny_rule_refuses_the_write_tool(cli: Cli, config_root: Path, work: Path, ready: Path) -> None:
    target = work / "written.txt"
    write = tool("mcp__srv__write", path=str(target), text="nope")
    spec = script(tool("Bash", command=wait_ready_command(ready)), write, tool("mcp__srv__echo", text="ok"), "DONE")
    args = ["--mcp-config", config("srv", stdio_entry(ready)), "--allowedTools", "Bash mcp__srv",
            "--disallowedTools", "mcp__srv__write"]  # fmt: skip
    with MockServer(spec) as server:
        proc = run(cli, config_root, work, server, *args)
        requests = main_requests(server)
    assert proc.returncode == 0, proc.stderr
    _wait, write, echo = tool_results(server)
    assert write.get("is_error") and "mcp__srv__write" in result_text(write), write
    assert not target.exists()
    assert not echo.get("is_error"), echo  # the rest of the server is still allowed
    assert "mcp__srv__write" not in tool_names(requests[1]) and "mcp__srv__echo" in tool_names(requests[1])


def test_pre_and_post_tool_use_hooks_match_mcp_tools(cli: Cli, config_root: Path, work: Path, ready: Path) -> None:
    log = work / "hooks.log"
    hook = {"type": "command", "command": f"cat >> {log}; echo >> {log}"}
    hooks = {"PreToolUse": [{"matcher": "mcp__srv__.*", "hooks": [hook]}],
             "PostToolUse": [{"matcher": "mcp__srv__echo", "hooks": [hook]}]}  # fmt: skip
    (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    spec = script(tool("Bash", command=wait_ready_command(ready)), tool("mcp__srv__echo", text="hooked"), "DONE")
    args = ["--mcp-config", config("srv", stdio_entry(ready)), "--allowedTools", "Bash mcp__srv"]
    with MockServer(spec) as server:
        proc = run(cli, config_root, work, server, *args)
    assert proc.returncode == 0, proc.stderr
    payloads = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert [(p["hook_event_name"], p["tool_name"]) for p in payloads] == [
        ("PreToolUse", "mcp__srv__echo"), ("PostToolUse", "mcp__srv__echo")
    ]  # fmt: skip
    assert payloads[0]["tool_input"] == {"text": "hooked"}


def test_a_server_that_crashes_mid_session_is_started_again(
    cli: Cli, config_root: Path, work: Path, ready: Path
) -> None:
    spec = script(tool("Bash", command=wait_ready_command(ready)), tool("mcp__srv__echo", text="before"),
                  tool("mcp__srv__die"), tool("mcp__srv__echo", text="after"), tool("Bash", command="echo GOES-ON"),
                  "DONE")  # fmt: skip
    args = ["--mcp-config", config("srv", stdio_entry(ready)), "--allowedTools", "Bash mcp__srv"]
    with MockServer(spec) as server:
        proc = run(cli, config_root, work, server, *args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "DONE"
    _wait, before, died, after, bash = tool_results(server)
    assert died.get("is_error") and "Connection closed" in result_text(died), died
    # the next call starts it again (Claude Code 2.1.330 does the same): another process answers
    assert echoed(before).split("pid ")[1] != echoed(after).split("pid ")[1]
    assert "GOES-ON" in result_text(bash) and not bash.get("is_error")
    assert proc.stderr == ""  # claude 2.1.332's -p says nothing of it either (the REPL shows one line)


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_a_slow_server_holds_the_first_request_only_until_it_is_ready(
    cli: Cli, config_root: Path, work: Path, ready: Path
) -> None:
    spec = script(tool("mcp__slow__echo", text="first"), "DONE")
    entry = stdio_entry(ready, "--delay", "5")
    with MockServer(spec) as server:
        proc = run(cli, config_root, work, server, "--mcp-config", config("slow", entry), "--allowedTools",
                   "mcp__slow", env={"MCP_TIMEOUT": "90000"})  # fmt: skip
        requests = main_requests(server)
    assert proc.returncode == 0, proc.stderr
    [listed] = ready.iterdir()
    waited = requests[0]["ts"] - listed.stat().st_mtime
    assert 0 < waited < 10, f"the first request went {waited:.1f} s after the server was ready"  # not at MCP_TIMEOUT
    assert "mcp__slow__echo" in tool_names(requests[0])
    assert echoed(tool_results(server)[0]).startswith("echo: first")


def test_a_bad_mcp_config_is_one_line_and_nothing_runs(cli: Cli, config_root: Path, work: Path) -> None:
    with MockServer(script("DONE")) as server:
        proc = run(cli, config_root, work, server, "--mcp-config", '{"mcpServers": {"s": {"type": "ws"}}}')
        assert main_requests(server) == []
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "agentteams: error: MCP server 's': transport type 'ws' is not supported (use stdio, http or sse)"
    ]
