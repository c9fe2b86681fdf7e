"""MCP start-up as Claude Code 2.1.332 has it in its non-interactive sessions, end to end with real processes: the
test MCP server (the `mcp` SDK) slow to start, `agentteams -p`, a stream-json session and an in-process teammate
against the scripted server. The servers start at once, side by side, and the first request waits until each has
connected or failed (or MCP_TIMEOUT has passed): it offers their tools, so a call of one from the first answer returns
its result; the init line shows each server's state; a server that fails or never comes up is said to the model, never
on stderr (claude prints nothing)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import result_text, script, tool, tool_results
from tests.support.mcp_lab import config, stdio_entry
from tests.support.team_run import lead_env
from tests.support.team_script import TEAM, say, shutdown_route, waiting
from tests.support.team_script import tool as turn
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(180)
FAILED = "These MCP servers failed to connect"
TOOLS = ["mcp__slow__die", "mcp__slow__echo", "mcp__slow__write"]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


@pytest.fixture
def ready(tmp_path: Path) -> Path:
    d = tmp_path / "ready"
    d.mkdir()
    return d


def main_requests(server: MockServer, route: str = "main") -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if r.get("route") == route and isinstance(r.get("body"), dict)]


def context_of(body: dict[str, Any]) -> str:
    """The text blocks before the prompt in the first user message: the conversation's first-turn context."""
    first = body["messages"][0]["content"]
    return "\n".join(b["text"] for b in first[:-1] if b.get("type") == "text") if isinstance(first, list) else ""


def mcp_tools(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body["tools"] if t["name"].startswith("mcp__")]


def echoed(block: dict[str, Any]) -> str:
    assert not block.get("is_error"), block
    said: str = json.loads(result_text(block))["result"]
    return said


def run(cli: Cli, config_root: Path, work: Path, server: MockServer, entry: dict[str, Any], **env: str) -> Any:
    args = ["-p", "go", "--mcp-config", config("slow", entry), "--allowedTools", "mcp__slow"]
    return cli(*args, cwd=work, env={**lead_env(config_root, server), **env}, timeout=120)


def test_a_first_answer_calls_a_tool_of_a_server_taking_2_s_and_gets_its_result(
    cli: Cli, config_root: Path, work: Path, ready: Path
) -> None:
    with MockServer(script(tool("mcp__slow__echo", text="early"), "DONE")) as server:
        proc = run(cli, config_root, work, server, stdio_entry(ready, "--delay", "2"))
        first, second = main_requests(server)
        asked_at = server.requests[0]["ts"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "DONE" and proc.stderr == ""
    [listed] = ready.iterdir()
    assert asked_at > listed.stat().st_mtime, "the first request went before the server was ready"
    assert mcp_tools(first) == TOOLS and "MCP servers" not in context_of(first)  # offered: nothing to say
    [block] = tool_results(server)
    assert echoed(block).startswith("echo: early")
    assert mcp_tools(second) == TOOLS


def test_the_servers_start_side_by_side_before_the_first_request(
    cli: Cli, config_root: Path, work: Path, ready: Path, tmp_path: Path
) -> None:
    gate, started = tmp_path / "gate", [tmp_path / "started-a", tmp_path / "started-b"]
    entries = {name: stdio_entry(ready, "--gate", str(gate), "--started", str(mark))
               for name, mark in zip(("a", "b"), started, strict=True)}  # fmt: skip
    args = ["-p", "go", "--mcp-config", json.dumps({"mcpServers": entries})]
    with MockServer(script("DONE")) as server:
        proc = subprocess.Popen(cli.argv(*args), cwd=work, env=lead_env(config_root, server), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        try:
            # both are started while neither can be ready: one is not waited for before the other starts
            wait_until(lambda: all(m.exists() for m in started), 60, "both servers to be started")
            assert not server.requests, "the first request went while the servers were held"
            gate.touch()
            out, err = proc.communicate(timeout=90)
        finally:
            proc.kill() if proc.poll() is None else None
        first = main_requests(server)[0]
    assert proc.returncode == 0 and out.strip() == "DONE" and err == "", err
    assert mcp_tools(first) == [f"mcp__{s}__{t}" for s in ("a", "b") for t in ("die", "echo", "write")]
    assert len(list(ready.iterdir())) == 2


def test_a_server_that_never_comes_up_is_given_up_at_mcp_timeout(
    cli: Cli, config_root: Path, work: Path, ready: Path, tmp_path: Path
) -> None:
    never = stdio_entry(ready, "--gate", str(tmp_path / "never-opened"))
    with MockServer(script(tool("mcp__slow__echo", text="early"), "DONE")) as server:
        began = time.monotonic()
        proc = run(cli, config_root, work, server, never, MCP_TIMEOUT="2000")
        took = time.monotonic() - began
        first = main_requests(server)[0]
    assert proc.returncode == 0 and proc.stdout.strip() == "DONE", proc.stderr
    assert proc.stderr == ""  # as claude's -p: nothing on stderr
    assert mcp_tools(first) == [] and FAILED in context_of(first)
    assert '- slow: "did not start within 2 s"' in context_of(first)
    [block] = tool_results(server)
    assert block.get("is_error")
    assert result_text(block) == ("MCP server 'slow' failed to connect: did not start within 2 s. Its tools are "
                                  "unavailable in this session.")  # fmt: skip
    assert took < 30, f"the run took {took:.0f} s"  # the deadline, not the server's own 120 s


def test_a_server_that_fails_to_start_is_said_to_the_model_with_its_reason(
    cli: Cli, config_root: Path, work: Path
) -> None:
    missing = {"command": str(work / "no-such-server"), "args": []}
    with MockServer(script(tool("mcp__slow__echo", text="early"), "DONE")) as server:
        proc = run(cli, config_root, work, server, missing)
        first = main_requests(server)[0]
    assert proc.returncode == 0 and proc.stdout.strip() == "DONE", proc.stderr
    assert proc.stderr == ""  # as claude's -p: nothing on stderr
    assert FAILED in context_of(first) and "No such file or directory" in context_of(first)
    [block] = tool_results(server)
    said = result_text(block)
    assert block.get("is_error") and said.startswith("MCP server 'slow' failed to connect: "), said
    assert "No such file or directory" in said and "no-such-server" in said


def test_a_stream_json_session_waits_and_its_init_line_shows_each_server_s_state(
    cli: Cli, config_root: Path, work: Path, ready: Path
) -> None:
    servers = {"slow": stdio_entry(ready, "--delay", "2"), "broken": {"command": str(work / "nope"), "args": []}}
    args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--mcp-config",
            json.dumps({"mcpServers": servers}), "--allowedTools", "mcp__slow"]  # fmt: skip
    prompt = json.dumps({"type": "user", "message": {"role": "user", "content": "go"}}) + "\n"
    with MockServer(script(tool("mcp__slow__echo", text="early"), "DONE")) as server:
        proc = cli(*args, cwd=work, env=lead_env(config_root, server), input=prompt, timeout=120)
        first = main_requests(server)[0]
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    init = next(line for line in lines if line.get("subtype") == "init")
    assert init["mcp_servers"] == [{"name": "broken", "status": "failed", "source": "dynamic"},
                                   {"name": "slow", "status": "connected", "source": "dynamic"}]  # fmt: skip
    assert [t for t in init["tools"] if t.startswith("mcp__")] == TOOLS
    assert mcp_tools(first) == TOOLS
    assert echoed(tool_results(server)[0]).startswith("echo: early")
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "DONE"


def team_scenario() -> dict[str, Any]:
    """The lead starts alice at once; each one's first answer calls its own slow server's tool."""
    lead = [
        turn("TeamCreate", team_name=TEAM),
        turn("Task", name="alice", team_name=TEAM, description="helper", prompt="You are alice. START-alice"),
        say("Started."),
        {**turn("SendMessage", to="alice", message={"type": "shutdown_request"}), "wait_for": "ALICE-DONE"},
        waiting("Waiting."),
        {**turn("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("LEAD-DONE"),
    ]
    alice = [
        turn("mcp__slow__echo", text="from-alice"),
        turn("SendMessage", to="team-lead", message="ALICE-DONE", summary="done"),
        say("Done."),
    ]
    return {"routes": [
        shutdown_route("alice"),
        {"name": "alice", "match": {"system": "Your name is alice", "last_prompt": "START-alice"}, "turns": alice},
        {"name": "alice-other", "match": {"system": "Your name is alice"}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_an_in_process_teammate_s_first_request_offers_its_own_slow_server_s_tools(
    cli: Cli, config_root: Path, work: Path, ready: Path
) -> None:
    entry = stdio_entry(ready, "--delay", "2")
    with MockServer(team_scenario()) as server:
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", "--mcp-config",
                   config("slow", entry), cwd=work, env=lead_env(config_root, server), timeout=150)  # fmt: skip
        alice = main_requests(server, "alice")
    assert proc.returncode == 0 and "LEAD-DONE" in proc.stdout, proc.stderr
    assert mcp_tools(alice[0]) == TOOLS  # as claude's in-process teammate, which has its lead's servers
    results = [b for b in alice[1]["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert echoed(results[0]).startswith("echo: from-alice")
