"""The configured MCP servers as `claude mcp list` and `get` judge them: a `.mcp.json` server not approved here is
pending (a rejected one is left out of the list), one switched off for the project is disabled, and every other one
is connected to with our MCP client to see that it starts and lists its tools."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from agentteams.settings.mcp_scopes import Entry, Scope, all_entries, project_state
from agentteams.settings.trust import trusted_by
from agentteams.tools.mcp.config import McpConfigError, approval, parse_server

Health = Literal["connected", "failed", "pending", "rejected", "disabled"]


@dataclass(frozen=True)
class Checked:
    """One server's row: its entry, and what became of it."""

    name: str
    scope: Scope
    raw: dict[str, Any]
    health: Health
    reason: str = ""  # why it failed to connect


def merged(cwd: Path) -> list[Entry]:
    """One entry per name, where a name first appears (user, project, local), the narrower scope's entry winning:
    the order and the winner of `claude mcp list`."""
    by_name: dict[str, Entry] = {}
    for entry in all_entries(cwd):
        by_name[entry.name] = entry
    return list(by_name.values())


def judge(cwd: Path, settings: Mapping[str, Any], entries: list[Entry]) -> list[Checked]:
    """Each entry's state before anything is started (connected is only a placeholder for those to check)."""
    project = project_state(cwd)
    trusted = trusted_by(cwd) is not None
    disabled = project.get("disabledMcpServers")
    off = {str(n) for n in disabled} if isinstance(disabled, list) else set()
    rows = []
    for e in entries:
        health: Health = "connected"
        if e.scope == "project":
            why = approval(e.name, settings, project)
            if why is not None and why.startswith("rejected"):
                health = "rejected"
            elif why is not None or not trusted:  # approvals count only in a folder the person trusts
                health = "pending"
        if health == "connected" and e.name in off:
            health = "disabled"
        rows.append(Checked(e.name, e.scope, e.raw, health))
    return rows


def check(rows: list[Checked]) -> list[Checked]:
    """Connect to every row still to check, all at once with our MCP client (each has the session's start-up time,
    MCP_TIMEOUT, to start and list its tools); the rows with their outcome, in the same order."""
    from agentteams.tools.mcp.hub import DEFAULT_STARTUP, McpHub

    configs, failed = [], {}
    for r in rows:
        if r.health != "connected":
            continue
        try:
            configs.append(parse_server(r.name, r.raw, r.scope, os.environ))
        except McpConfigError as e:
            failed[r.name] = str(e).split(": ", 1)[-1]
    try:
        startup = max(0.1, float(os.environ.get("MCP_TIMEOUT", "")) / 1000)
    except ValueError:
        startup = DEFAULT_STARTUP
    hub = McpHub(configs, warn=lambda line: None)
    try:
        hub.start()
        hub.wait_settled(startup + 5)  # the hub gives up on each server after `startup`
        for name, conn in hub.conns.items():
            if conn.status != "connected":
                failed[name] = conn.error or f"did not start within {startup:g} s"
    finally:
        hub.close()
    return [Checked(r.name, r.scope, r.raw, "failed", listed(failed[r.name], r.name, r.raw, startup))
            if r.name in failed else r for r in rows]  # fmt: skip


# our one-line reasons -> claude 2.1.332's words for them in `mcp list` (observed: a missing or non-executable
# command, a server that exits, one that never answers, a refused or unknown host)
_SPAWN = re.compile(r"^\[Errno (2|13)\] (?:No such file or directory|Permission denied): '(.*)'$")
_NO_HOST = re.compile(r"^\[Errno -[235]\] ")
_REFUSED = "ECONNREFUSED: Unable to connect. Is the computer able to access the url?"


def listed(reason: str, name: str, raw: Mapping[str, Any], startup: float) -> str:
    """A failed server's reason as claude's `mcp list` words it; a reason it has no words for stays ours."""
    url = str(raw.get("url") or "")
    sse = "SSE error: " if raw.get("type") == "sse" else ""
    if (spawn := _SPAWN.match(reason)) is not None:
        code, what = ("ENOENT", "no such file or directory") if spawn[1] == "2" else ("EACCES", "permission denied")
        return f"{code}: {what}, posix_spawn '{spawn[2]}'"
    if reason == "Connection closed":
        return "CONNECTION_CLOSED: Connection closed"
    if reason.startswith("did not start within"):
        return f'MCP server "{name}" connection timed out after {int(startup * 1000)}ms'
    if reason == "All connection attempts failed" and url:
        return sse + _REFUSED
    if _NO_HOST.match(reason) and url:
        return f"{sse}ENOTFOUND: getaddrinfo ENOTFOUND {urlsplit(url).hostname}"
    return reason
