"""A driving program's changes to the session's MCP servers: `mcp_toggle` (off: closed and its tools no longer
offered; on: started again), `mcp_reconnect`, `mcp_set_servers` (the program's own set, replaced as a whole)."""

from __future__ import annotations

import os
from typing import Any

from agentteams.errors import AgentTeamsError
from agentteams.tools.mcp.config import McpConfigError, ServerConfig, parse_server


def _name(request: dict[str, Any]) -> str:
    name = request.get("serverName")
    if not isinstance(name, str) or not name:
        raise AgentTeamsError("serverName is required")
    return name


def toggle(session: Any, request: dict[str, Any]) -> None:
    """Claude Code answers a toggle, as a reconnect, with no body: the program reads the effect from `mcp_status`."""
    name, hub = _name(request), session.mcp.hub
    if hub is None:
        raise AgentTeamsError(f"Server not found: {name}")
    hub.set_enabled(name, request.get("enabled") is not False)


def reconnect(session: Any, request: dict[str, Any]) -> None:
    name, hub = _name(request), session.mcp.hub
    if hub is None:
        raise AgentTeamsError(f"Server not found: {name}")
    conn = hub.reconnect(name)
    if conn.status == "failed":
        raise AgentTeamsError(f"Failed to reconnect to {name}: {conn.error}")


def set_servers(session: Any, request: dict[str, Any]) -> dict[str, Any]:
    """The servers the program names become its set: {added, removed, errors} (an entry that cannot be used, or a
    server that failed to start, by name)."""
    raw = request.get("servers")
    if not isinstance(raw, dict):
        raise AgentTeamsError("servers must be an object of MCP server configurations")
    configs: list[ServerConfig] = []
    errors: dict[str, str] = {}
    for name, entry in raw.items():
        try:
            configs.append(parse_server(str(name), entry, "program", os.environ))
        except McpConfigError as e:
            errors[str(name)] = str(e)
    if not configs and session.mcp.hub is None:
        return {"added": [], "removed": [], "errors": errors}
    hub = session.mcp.ensure_hub()
    added, removed = hub.replace_added(configs)
    for name in added:
        conn = hub.conns.get(name)
        if conn is not None and conn.status == "failed":
            errors[name] = conn.error
    return {"added": added, "removed": removed, "errors": errors}
