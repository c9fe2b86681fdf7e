"""WebSearch, as Claude Code's: a side request to the model with the Messages API's own web search server tool
(web_search_20250305, allowed or blocked domains), so the results come from the provider; its text and result
links become the tool's answer."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from agentteams.errors import AgentTeamsError
from agentteams.model.types import Block, ModelRequest
from agentteams.tools.base import Tool, ToolContext, ToolInputError, ToolResult, require_str

SERVER_TOOL = "web_search_20250305"
MAX_USES = 8  # searches the model may run for one query
# as Claude Code 2.1.330 (2.1.197 forced the tool): the model may search, then sums the results up
SYSTEM = "Search the web once for the user's query with the web_search tool, then sum the results up briefly."


def domains(args: dict[str, Any], key: str) -> list[str] | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(d, str) and d.strip() for d in value):
        raise ToolInputError(f"`{key}` must be a list of domain names")
    return [d.strip() for d in value]


def search_request(model: str, query: str, allowed: list[str] | None, blocked: list[str] | None) -> ModelRequest:
    """The side request: the server tool, with the domain filters the API applies."""
    server: dict[str, Any] = {"type": SERVER_TOOL, "name": "web_search", "max_uses": MAX_USES}
    if allowed:
        server["allowed_domains"] = allowed
    if blocked:
        server["blocked_domains"] = blocked
    ask = [{"role": "user", "content": f"Search the web for: {query}"}]
    return ModelRequest(model, SYSTEM, [], ask, max_tokens=8192, agent="WebSearch", server_tools=[server],
                        tool_choice={"type": "auto"})  # fmt: skip


def result_lines(block: Block) -> str | None:
    """A web_search_tool_result as one line: its links as JSON, or the search's error."""
    content = block.get("content")
    if isinstance(content, dict):
        return f"Web search error: {content.get('error_code', 'unknown')}"
    links = [{"title": r.get("title", ""), "url": r.get("url", "")} for r in content or [] if isinstance(r, dict)]
    return f"Links: {json.dumps(links, ensure_ascii=False, separators=(',', ':'))}"


def format_results(query: str, content: list[Block]) -> tuple[str, int]:
    """The answer for the model (the search's text and links, in order) and how many links it holds."""
    parts, count = [f'Web search results for query: "{query}"'], 0
    for block in content:
        if block.get("type") == "text" and block.get("text", "").strip():
            parts.append(block["text"].strip())
        elif block.get("type") == "web_search_tool_result":
            line = result_lines(block)
            if line:
                parts.append(line)
                count += len(block["content"]) if isinstance(block.get("content"), list) else 0
    parts.append("Cite the sources you use from these results as markdown links in your answer.")
    return "\n\n".join(parts), count


class WebSearchTool(Tool):
    name = "WebSearch"
    description = (
        "Search the web and get result titles and URLs with a short summary. Use `allowed_domains` to keep "
        "only some sites or `blocked_domains` to leave some out (not both). Cite the sources you use as "
        "markdown links."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 2, "description": "The search query"},
            "allowed_domains": {"type": "array", "items": {"type": "string"}, "description": "Only these sites"},
            "blocked_domains": {"type": "array", "items": {"type": "string"}, "description": "Never these sites"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    kind = "web"

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = require_str(args, "query").strip()
        if len(query) < 2:
            raise ToolInputError("`query` must be at least 2 characters")
        allowed, blocked = domains(args, "allowed_domains"), domains(args, "blocked_domains")
        if allowed and blocked:
            raise ToolInputError("give allowed_domains or blocked_domains, not both")
        if ctx.hooks.ask_model is None:
            return ToolResult.error("WebSearch is not available here: it needs the model's web search tool")
        try:
            response = ctx.hooks.ask_model(search_request(ctx.hooks.model, query, allowed, blocked))
        except AgentTeamsError as exc:
            return ToolResult.error(f"The web search failed: {exc}")
        text, links = format_results(query, response.content)
        return ToolResult(text, data={"query": query, "links": links})
