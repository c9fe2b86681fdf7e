"""Interop tier, MCP start-up: the real Claude Code 2.1.332 and ours given the same MCP servers (the `mcp` SDK).

An interactive lead in a tmux pane, its server held at its start by a gate file: the first request goes before it is
ready, its tools not offered yet, the model told in the first turn (in the messages, not the system prompt) that the
server is still connecting; the model's call of its tool, made while it still connects, waits for it and gets the
tool's result once the gate opens. A -p session and a stream-json (SDK) one, a server taking 2 s and one that cannot
start: the first request waits and offers the slow server's tools (claude names them among its deferred tools), says
the other failed, the init line shows both as claude's does, the early call gets its result, and stderr stays empty."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import result_text, script, tool
from tests.support.lead_pane import API_KEY, START, LeadPane
from tests.support.mcp_lab import config, stdio_entry
from tests.support.procs import child_env
from tests.support.team_run import lead_env
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(300)
CONNECTING = {"claude": "still connecting", "ours": "These MCP servers are still connecting: slow."}


def first_turn_texts(body: dict[str, Any]) -> list[str]:
    """The texts of the messages before the first answer (each block's): the first turn's context and prompt."""
    texts = []
    for message in body["messages"]:
        if message["role"] == "assistant":
            break
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts += [b["text"] for b in blocks if b.get("type") == "text"]
    return texts


def tool_results(server: MockServer) -> list[dict[str, Any]]:
    """Every tool result sent, once each (claude may follow one with a message of its own: not only the last)."""
    seen: dict[str, dict[str, Any]] = {}
    for r in server.requests:
        for message in r["body"]["messages"] if isinstance(r.get("body"), dict) else []:
            content = message["content"] if isinstance(message["content"], list) else []
            seen |= {b["tool_use_id"]: b for b in content if b.get("type") == "tool_result"}
    return list(seen.values())


def run_one(who: str, start: Callable[[dict[str, str], Path, list[str]], Callable[[str], bool]],
            env: Callable[[str], dict[str, str]], tmp_path: Path) -> dict[str, Any]:  # fmt: skip
    """One CLI's session: the first request as sent, and the tool result its model got for the early call."""
    base = tmp_path / who
    work, ready, gate = base / "work", base / "ready", base / "gate"
    work.mkdir(parents=True)
    ready.mkdir()
    args = ["--mcp-config", config("slow", stdio_entry(ready, "--gate", str(gate))), "--allowedTools", "mcp__slow"]
    with MockServer(script(tool("mcp__slow__echo", text="early"), "DONE")) as server:
        shows = start(env(server.base_url), work, args)
        wait_until(lambda: bool([r for r in server.requests if r.get("route") == "main"]), 90, f"{who}'s request")
        first = next(r["body"] for r in server.requests if r.get("route") == "main")
        held = not list(ready.iterdir())
        gate.touch()
        wait_until(lambda: bool(tool_results(server)) and shows("DONE"), 90, f"{who}'s answer after the tool's result")
        results = tool_results(server)
    return {"first": first, "held": held, "results": results}


@ccv.only(rc.NEWEST)
def test_the_first_request_says_the_server_is_connecting_and_the_early_call_waits(
    claude: Path, claude_version: str, cli: Cli, config_root: Path, tmp_path: Path, tmux: Tmux
) -> None:
    got, cfg = {}, tmp_path / "cc-config"
    try:

        def real(env: dict[str, str], work: Path, args: list[str]) -> Callable[[str], bool]:
            rc.seed_home(cfg, [work], claude_version)
            lead = rc.RealLead(tmux, claude, env, work, args)
            lead.wait_ready(START)
            lead.submit("go")
            return lambda text: text in lead.screen()

        def ours(env: dict[str, str], work: Path, args: list[str]) -> Callable[[str], bool]:
            lead = LeadPane(tmux, cli, env, work, ["--dangerously-skip-permissions", *args])
            lead.idle(START)
            lead.submit("go")
            return lambda text: text in lead.screen()

        def our_env(base_url: str) -> dict[str, str]:
            env = child_env(config_root)
            env.pop("CLAUDE_CODE_TEAMMATE_COMMAND", None)
            return {**env, "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": API_KEY, "LANG": "C.UTF-8",
                    "TERM": "xterm-256color"}  # fmt: skip

        got["claude"] = run_one("claude", real, lambda url: rc.claude_env(cfg, url), tmp_path)
        tmux.stop()  # one CLI at a time, each in a tmux server started with its own environment
        got["ours"] = run_one("ours", ours, our_env, tmp_path)
    finally:
        tmux.stop()
    for who, seen in got.items():
        first = seen["first"]
        assert seen["held"], f"{who}: the server was ready before the first request: nothing compared"
        assert not [t["name"] for t in first["tools"] if "slow" in t["name"]], (who, "its tools are offered")
        told = [t for t in first_turn_texts(first) if CONNECTING[who] in t]
        assert told and "slow" in told[0], f"{who}: the first turn does not name the connecting server"
        assert not any(text in json.dumps(first.get("system")) for text in CONNECTING.values()), who
        [block] = seen["results"]
        assert not block.get("is_error"), (who, block)  # the call waited for the server instead of failing
        assert json.loads(result_text(block))["result"].startswith("echo: early"), (who, block)


SESSIONS = {
    "print": ["-p", "go", "--output-format", "stream-json", "--verbose"],
    "sdk": ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
}
PROMPT = json.dumps({"type": "user", "message": {"role": "user", "content": "go"}}) + "\n"


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("kind", list(SESSIONS))
def test_a_print_or_sdk_session_waits_for_its_servers_as_claude_does(
    kind: str, claude: Path, claude_version: str, cli: Cli, config_root: Path, tmp_path: Path
) -> None:
    got = {}
    for who in ("claude", "ours"):
        work, ready = tmp_path / who / "work", tmp_path / who / "ready"
        work.mkdir(parents=True)
        ready.mkdir()
        servers = {"slow": stdio_entry(ready, "--delay", "2"), "broken": {"command": str(work / "nope"), "args": []}}
        args = [*SESSIONS[kind], "--mcp-config", json.dumps({"mcpServers": servers}), "--allowedTools", "mcp__slow"]
        stdin = PROMPT if kind == "sdk" else ""
        with MockServer(script(tool("mcp__slow__echo", text="early"), "DONE")) as server:
            if who == "claude":
                cfg = tmp_path / "cc-config"
                rc.seed_home(cfg, [work], claude_version)
                env = rc.claude_env(cfg, server.base_url)
                proc = subprocess.run([str(claude), *args], env=env, cwd=work, input=stdin, capture_output=True,
                                      text=True, timeout=120, check=False)  # fmt: skip
            else:
                proc = cli(*args, cwd=work, env=lead_env(config_root, server), input=stdin, timeout=120)
            first = next(r["body"] for r in server.requests if r.get("route") == "main")
            results = tool_results(server)
        assert proc.returncode == 0 and proc.stderr == "", (who, proc.stderr)  # a failed server: nothing said there
        lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        init = next(line for line in lines if line.get("subtype") == "init")
        got[who] = {"first": first, "results": results, "init": init}
    rows = {who: sorted(seen["init"]["mcp_servers"], key=lambda r: r["name"]) for who, seen in got.items()}
    assert rows["ours"] == rows["claude"], rows  # slow connected, broken failed, each with its source
    assert {r["status"] for r in rows["claude"]} == {"connected", "failed"}, rows
    for who, seen in got.items():
        first, messages = seen["first"], json.dumps(seen["first"]["messages"])
        assert "mcp__slow__echo" in json.dumps(first), (
            f"{who}: the first request does not offer the slow server's tools"
        )
        assert "still connecting" not in json.dumps(first), f"{who}: the first request did not wait"
        assert "failed to connect" in messages and "broken" in messages, f"{who}: the failed server is not named"
        assert "mcp__slow__echo" in [t for t in seen["init"]["tools"] if t.startswith("mcp__")], who
        [block] = seen["results"]
        assert not block.get("is_error") and json.loads(result_text(block))["result"].startswith("echo: early"), who
