"""MCP servers in Claude Code's three writable scopes, read and written where `claude mcp` keeps them: `.mcp.json`
(project), the state file's top-level `mcpServers` (user) and its `projects.<folder>.mcpServers` (local).
Writes merge into the file as it is at that moment and replace it atomically; a key we do not know is kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentteams.errors import AgentTeamsError
from agentteams.settings.section import read_object
from agentteams.settings.trust import state_file
from agentteams.store.fs.atomic_json import atomic_write_json

Scope = Literal["local", "project", "user"]
SCOPES: tuple[Scope, ...] = ("local", "project", "user")
# every scope name Claude Code knows; only the first three can be written
KNOWN_SCOPES = ("local", "user", "project", "dynamic", "enterprise", "claudeai", "managed", "agent")
LABELS: dict[Scope, str] = {
    "local": "Local config (private to you in this project)",
    "project": "Project config (shared via .mcp.json)",
    "user": "User config (available in all your projects)",
}  # fmt: skip
APPROVAL_KEYS = ("enabledMcpjsonServers", "disabledMcpjsonServers", "enableAllProjectMcpServers")
# what Claude Code writes into a project's entry it creates (the keys we add a server beside)
PROJECT_DEFAULTS: dict[str, Any] = {
    "allowedTools": [], "mcpContextUris": [], "mcpServers": {}, "enabledMcpjsonServers": [],
    "disabledMcpjsonServers": [], "hasTrustDialogAccepted": False, "hasClaudeMdExternalIncludesApproved": False,
    "hasClaudeMdExternalIncludesWarningShown": False,
}  # fmt: skip


class McpScopeError(AgentTeamsError):
    """A scope's file cannot be read or written as it is (it is then left untouched)."""


@dataclass(frozen=True)
class Entry:
    """One configured server: its name, scope and entry as written."""

    name: str
    scope: Scope
    raw: dict[str, Any]


def project_key(cwd: Path) -> str:
    """The folder a local-scope server is kept under: the repository's root, else the folder itself (as Claude
    Code keys `projects` for `claude mcp add`)."""
    here = cwd.resolve()
    return str(next((d for d in (here, *here.parents) if (d / ".git").exists()), here))


def project_file(cwd: Path) -> Path:
    return cwd / ".mcp.json"


def where(scope: Scope, cwd: Path) -> str:
    """The file a scope lives in, as `claude mcp` says it ("File modified: ...")."""
    if scope == "project":
        return str(project_file(cwd).resolve())
    return f"{state_file()} [project: {project_key(cwd)}]" if scope == "local" else str(state_file())


def _read_object(path: Path) -> dict[str, Any]:
    return read_object(path, McpScopeError)


def _servers(holder: object) -> dict[str, Any]:
    found = holder.get("mcpServers") if isinstance(holder, dict) else None
    return {str(k): v for k, v in found.items() if isinstance(v, dict)} if isinstance(found, dict) else {}


def _project_entry(state: dict[str, Any], cwd: Path) -> dict[str, Any]:
    projects = state.get("projects")
    entry = projects.get(project_key(cwd)) if isinstance(projects, dict) else None
    return entry if isinstance(entry, dict) else {}


def read_scope(scope: Scope, cwd: Path) -> dict[str, dict[str, Any]]:
    """A scope's servers by name, in file order; {} when its file is missing or unreadable."""
    try:
        if scope == "project":
            return _servers(_read_object(project_file(cwd)))
        state = _read_object(state_file())
    except McpScopeError:
        return {}
    return _servers(state) if scope == "user" else _servers(_project_entry(state, cwd))


def all_entries(cwd: Path) -> list[Entry]:
    """Every configured server of the three scopes, in the order `claude mcp list` shows them: user, project,
    local."""
    return [Entry(name, scope, raw) for scope in ("user", "project", "local") for name, raw in
            read_scope(scope, cwd).items()]  # fmt: skip


def read_state_for_update() -> dict[str, Any]:
    """The state file's object as it is now, to change and write back; McpScopeError when it cannot be read (so
    that it is never replaced by a file missing what it held)."""
    return _read_object(state_file())


def write_state(state: dict[str, Any]) -> None:
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, state)


def _update_state(change: Callable[[dict[str, Any]], None]) -> None:
    state = read_state_for_update()
    change(state)
    write_state(state)


def _local_entry(state: dict[str, Any], cwd: Path) -> dict[str, Any]:
    projects = state.get("projects")
    if not isinstance(projects, dict):
        projects = state["projects"] = {}
    key = project_key(cwd)
    old = projects.get(key)
    entry = projects[key] = {**json.loads(json.dumps(PROJECT_DEFAULTS)), **(old if isinstance(old, dict) else {})}
    if not isinstance(entry.get("mcpServers"), dict):
        entry["mcpServers"] = {}
    return entry


def add(scope: Scope, cwd: Path, name: str, server: dict[str, Any]) -> None:
    """Add `name` to the scope's file; McpScopeError when the scope already has it (Claude Code's line)."""
    if name in read_scope(scope, cwd):
        raise McpScopeError(f"MCP server {name} already exists in {scope} config")
    if scope == "project":
        path = project_file(cwd)
        data = _read_object(path)
        _put(data, name, server)
        atomic_write_json(path, data)
    elif scope == "user":
        _update_state(lambda s: _put(s, name, server))
    else:
        _update_state(lambda s: _put(_local_entry(s, cwd), name, server))


def _put(holder: dict[str, Any], name: str, server: dict[str, Any]) -> None:
    servers = holder.get("mcpServers")
    holder["mcpServers"] = {**(servers if isinstance(servers, dict) else {}), name: server}


def remove(scope: Scope, cwd: Path, name: str) -> None:
    """Remove `name` from the scope's file (the caller has checked it is there)."""

    def drop(holder: dict[str, Any]) -> None:
        servers = holder.get("mcpServers")
        if isinstance(servers, dict):
            servers.pop(name, None)

    if scope == "project":
        path = project_file(cwd)
        data = _read_object(path)
        drop(data)
        atomic_write_json(path, data)
    elif scope == "user":
        _update_state(drop)
    else:
        _update_state(lambda s: drop(_local_entry(s, cwd)))


def reset_project_choices(cwd: Path, local_settings: Path) -> None:
    """Forget which `.mcp.json` servers were approved or rejected here: the approval keys leave this project's
    entry of the state file and the local settings file (each only if it holds one)."""

    def forget(state: dict[str, Any]) -> None:
        entry = _project_entry(state, cwd)
        for key in APPROVAL_KEYS:
            entry.pop(key, None)

    if any(k in _project_entry(_read_object(state_file()), cwd) for k in APPROVAL_KEYS):
        _update_state(forget)
    settings = _read_object(local_settings)
    if any(k in settings for k in APPROVAL_KEYS):
        for key in APPROVAL_KEYS:
            settings.pop(key, None)
        atomic_write_json(local_settings, settings)


def project_state(cwd: Path) -> dict[str, Any]:
    """This project's entry of the state file (approvals, disabled servers); {} when it has none."""
    try:
        return _project_entry(_read_object(state_file()), cwd)
    except McpScopeError:
        return {}
