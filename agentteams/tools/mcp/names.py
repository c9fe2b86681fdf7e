"""MCP tool names as Claude Code spells them (`mcp__<server>__<tool>`) and what a permission rule's tool part
(`mcp__srv`, `mcp__srv__*`, `mcp__srv__tool`) names; no SDK here: the permission checks import it."""

from __future__ import annotations

import re


def normalized(name: str) -> str:
    """A server or tool name as it appears in a tool name: anything but letters, digits, _ and - becomes _."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def tool_name(server: str, tool: str) -> str:
    return f"mcp__{normalized(server)}__{normalized(tool)}"


def rule_names(rule_tool: str, name: str, *, deny: bool) -> bool:
    """Whether a rule's tool part names this MCP tool: `mcp__srv` and `mcp__srv__*` every tool of srv, else the exact
    name. A bare `mcp__*` wildcard names every MCP tool for deny and ask, never for allow (Claude Code's)."""
    if not name.startswith("mcp__") or not rule_tool.startswith("mcp__"):
        return False
    if rule_tool.endswith("*"):
        prefix = rule_tool[:-1]
        anchored = prefix.count("__") >= 2 and prefix.endswith("__")
        return name.startswith(prefix) and (deny or anchored)
    return rule_tool.count("__") == 1 and name.startswith(rule_tool + "__")
