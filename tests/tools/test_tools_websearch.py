"""WebSearch: a side request with the API's web_search_20250305 server tool (domain filters, forced), and the
scripted server's server_tool_use + web_search_tool_result blocks passed to the model as the tool's result; end to
end through the real anthropic SDK client in `agentteams -p`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.mockapi.script import ScriptError, load_script
from agentteams.model.types import ModelRequest, ModelResponse, Usage
from agentteams.tools.base import ToolContext, ToolInputError
from agentteams.tools.web.search import WebSearchTool, format_results
from tests.support.cli import Cli
from tests.support.web_search import RESULTS, search_turn


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    context = ToolContext(cwd=tmp_path, store=None, session_id="s")  # type: ignore[arg-type]
    context.hooks.model = "claude-sonnet-4-6"
    return context


def test_the_request_carries_the_server_tool_and_the_results_are_formatted(ctx: ToolContext) -> None:
    asked: list[ModelRequest] = []

    def ask(request: ModelRequest) -> ModelResponse:
        asked.append(request)
        content: list[dict[str, Any]] = [{"type": "text", "text": "Found it."},
                   {"type": "web_search_tool_result", "tool_use_id": "srv1", "content": RESULTS}]  # fmt: skip
        return ModelResponse(content, "end_turn", Usage(5, 5), request.model)

    ctx.hooks.ask_model = ask
    result = WebSearchTool().run({"query": "python docs", "allowed_domains": ["docs.python.org"]}, ctx)
    [request] = asked
    assert request.model == "claude-sonnet-4-6" and request.tools == []
    assert request.server_tools == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 8,
                                     "allowed_domains": ["docs.python.org"]}]  # fmt: skip
    assert request.tool_choice == {"type": "auto"}  # as Claude Code 2.1.330 (2.1.197 forced the tool)
    assert result.content.startswith('Web search results for query: "python docs"\n\nFound it.\n\nLinks: [')
    assert '{"title":"Python 3 docs","url":"https://docs.python.org/3/"}' in result.content
    assert result.data == {"query": "python docs", "links": 2}


def test_bad_input_and_no_model(ctx: ToolContext) -> None:
    for bad in ({"query": "x"}, {"query": "ok", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]},
                {"query": "ok", "blocked_domains": "b.com"}):  # fmt: skip
        with pytest.raises(ToolInputError):
            WebSearchTool().run(bad, ctx)
    assert WebSearchTool().run({"query": "python"}, ctx).is_error  # no model lent: one clear error


def test_a_search_error_is_said() -> None:
    error = {"type": "web_search_tool_result", "tool_use_id": "s",
             "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}  # fmt: skip
    text, links = format_results("q", [error])
    assert "Web search error: max_uses_exceeded" in text and links == 0


def test_the_mock_script_checks_search_result_blocks() -> None:
    bad = {"routes": [{"name": "r", "turns": [{"content": [{"type": "web_search_tool_result", "content": []}]}]}]}
    with pytest.raises(ScriptError, match="web_search_tool_result"):
        load_script(bad)
    load_script({"routes": [{"name": "r", "turns": [search_turn("q")]}]})


def test_web_search_end_to_end(cli: Cli, tmp_path: Path, servers: list[MockServer]) -> None:
    """`agentteams -p` through the real SDK: the search request carries the server tool and its filter, the
    streamed server_tool_use and results come back, and the main model gets them as WebSearch's result."""
    main = {"name": "main", "match": {"any": "SEARCHMARK"}, "turns": [
        {"content": [{"type": "tool_use", "name": "WebSearch",
                      "input": {"query": "QMARK python docs", "blocked_domains": ["spam.example"]}}]},
        "done"]}  # fmt: skip
    search = {"name": "search", "match": {"any": "QMARK"}, "turns": [search_turn("QMARK python docs")]}
    server = MockServer({"routes": [main, search]}).start()
    servers.append(server)
    env = {**cli.env(), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-test-search"}
    work = tmp_path / "w"
    work.mkdir()
    proc = cli("-p", "SEARCHMARK look it up", "--allowedTools", "WebSearch", env=env, cwd=work, timeout=60)
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stderr
    [asked] = [r["body"] for r in server.requests if r.get("route") == "search"]
    [server_tool] = asked["tools"]
    assert server_tool["type"] == "web_search_20250305" and server_tool["blocked_domains"] == ["spam.example"]
    assert asked["tool_choice"] == {"type": "auto"}
    last = [r["body"] for r in server.requests if r.get("route") == "main"][-1]
    [block] = [b for b in last["messages"][-1]["content"] if b.get("type") == "tool_result"]
    said = block["content"] if isinstance(block["content"], str) else json.dumps(block["content"])
    assert "SUMMARY-MARK" in said and "https://docs.python.org/3/tutorial/" in said and not block.get("is_error")
