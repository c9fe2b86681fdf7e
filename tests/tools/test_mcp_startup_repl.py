"""MCP start-up in the interactive lead (a real tmux pane): the person's first prompt goes while the test's MCP server
(the `mcp` SDK, held at its start by a gate file) is still connecting; the request says so, the model's call of its
tool waits for it and gets its result; a server that failed before the prompt is named with its reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.headless import result_text, script, tool, tool_results
from tests.support.lead_pane import START, Start
from tests.support.mcp_lab import config, stdio_entry
from tests.support.wait import wait_until

pytestmark = pytest.mark.timeout(180)


def first_context(body: dict[str, Any]) -> str:
    first = body["messages"][0]["content"]
    return "\n".join(b["text"] for b in first[:-1] if b.get("type") == "text") if isinstance(first, list) else ""


def test_the_first_prompt_is_told_the_server_connects_and_its_call_waits(start_repl: Start, tmp_path: Path) -> None:
    ready, gate = tmp_path / "ready", tmp_path / "gate"
    ready.mkdir()
    entry = stdio_entry(ready, "--gate", str(gate))
    lead, server = start_repl(script(tool("mcp__slow__echo", text="early"), "DONE"), "--mcp-config",
                              config("slow", entry), "--allowedTools", "mcp__slow")  # fmt: skip
    lead.idle(START)
    lead.submit("go")
    wait_until(lambda: bool(server.requests), 60, "the first request")
    first = server.requests[0]["body"]
    assert not [t for t in first["tools"] if t["name"].startswith("mcp__")]
    assert "These MCP servers are still connecting: slow." in first_context(first)
    assert not list(ready.iterdir())  # still held: the call that comes next must wait for it
    gate.touch()
    lead.wait_text("DONE", timeout=60)
    [block] = tool_results(server)
    assert not block.get("is_error") and json.loads(result_text(block))["result"].startswith("echo: early"), block


def test_a_server_that_failed_before_the_first_prompt_is_named_with_its_reason(
    start_repl: Start, tmp_path: Path
) -> None:
    missing = {"command": str(tmp_path / "no-such-server"), "args": []}
    lead, server = start_repl(script("DONE"), "--mcp-config", config("slow", missing))
    lead.idle(START)
    lead.wait_text("MCP server 'slow' failed to start", timeout=60)  # said on the screen as it happens
    lead.submit("go")
    lead.wait_text("DONE")
    context = first_context(server.requests[0]["body"])
    assert "These MCP servers failed to connect" in context and "still connecting" not in context
    assert f"- slow: \"[Errno 2] No such file or directory: '{tmp_path}/no-such-server'\"" in context, context
