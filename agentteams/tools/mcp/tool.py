"""An MCP server's tool as one of ours: named `mcp__<server>__<tool>` (Claude Code's), run through the hub."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from agentteams.tools.base import Tool, ToolContext, ToolKind, ToolResult
from agentteams.tools.mcp.connection import RemoteTool
from agentteams.tools.mcp.hub import McpHub
from agentteams.tools.mcp.names import normalized, tool_name

MAX_OUTPUT = 100_000  # characters of a result the model is shown (about Claude Code's 25k-token cap)


class McpTool(Tool):
    """Made per remote tool by `mcp_tool` (a class each: a tool's name is a class attribute here)."""

    kind: ClassVar[ToolKind] = "execute"  # a tool of unknown effect: asked for unless a rule or mode allows it
    hub: ClassVar[McpHub]
    server: ClassVar[str]
    remote: ClassVar[RemoteTool]

    @property
    def read_only(self) -> bool:
        return self.remote.read_only

    def permission_target(self, args: dict[str, Any], cwd: Path | None = None) -> str | None:
        return None

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        outcome = self.hub.call(self.server, self.remote.name, args, ctx.interrupt)
        text = outcome.text
        if len(text) > MAX_OUTPUT:
            text = text[:MAX_OUTPUT] + f"\n[output truncated: {len(outcome.text) - MAX_OUTPUT} more characters]"
            return ToolResult(text, is_error=outcome.is_error)  # too long: the text, cut, instead of the blocks
        return ToolResult(text, is_error=outcome.is_error, blocks=outcome.blocks)


def mcp_tool(hub: McpHub, server: str, remote: RemoteTool) -> Tool:
    attrs = {
        "name": tool_name(server, remote.name), "description": remote.description or f"{remote.name} ({server})",
        "input_schema": remote.input_schema, "hub": hub, "server": server, "remote": remote,
    }  # fmt: skip
    cls = type(f"Mcp_{normalized(server)}_{normalized(remote.name)}", (McpTool,), attrs)
    tool: Tool = cls()
    return tool


def hub_tools(hub: McpHub) -> list[Tool]:
    """Every ready tool of the hub's servers, sorted: they come after the built-ins, so the cached prefix holds."""
    return [mcp_tool(hub, server, remote) for server, remote in hub.remote_tools()]
