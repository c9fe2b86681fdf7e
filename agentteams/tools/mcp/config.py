"""Which MCP servers a session starts, as Claude Code finds them: `--mcp-config` values, the user's and the project's
(`.mcp.json`, approved) servers, with `${VAR}` / `${VAR:-default}` expanded."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentteams.errors import AgentTeamsError

Transport = Literal["stdio", "http", "sse", "sdk"]  # sdk: a driving program's own server (tools/mcp/program_servers.py)
Origin = Literal["flag", "project", "user", "local", "program"]  # program: set by `mcp_set_servers`
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpConfigError(AgentTeamsError):
    """An `--mcp-config` value or a server entry that cannot be used."""


@dataclass(frozen=True)
class McpFlags:
    """The command line's MCP options, passed on to teammates as Claude Code's lead does (each value as given)."""

    configs: tuple[str, ...] = ()
    strict: bool = False

    def argv(self) -> list[str]:
        args = [a for value in self.configs for a in ("--mcp-config", value)]
        return [*args, "--strict-mcp-config"] if self.strict else args


@dataclass(frozen=True)
class ServerConfig:
    """One server: a command to start (stdio) or a URL to reach (streamable HTTP)."""

    name: str
    transport: Transport
    origin: Origin
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Pending:
    """A project (`.mcp.json`) server not approved: listed by /mcp, never started."""

    name: str
    why: str


@dataclass
class Found:
    servers: list[ServerConfig] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line each


def expand(text: str, env: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}`; an unset variable without a default stays as written (Claude Code's)."""

    def one(m: re.Match[str]) -> str:
        value = env.get(m.group(1))
        if value:
            return value
        return m.group(2) if m.group(2) is not None else (value if value is not None else m.group(0))

    return _VAR.sub(one, text)


def parse_server(name: str, raw: object, origin: Origin, env: Mapping[str, str]) -> ServerConfig:
    """One `mcpServers` entry; McpConfigError saying what is wrong with it."""
    if not isinstance(raw, dict):
        raise McpConfigError(f"MCP server {name!r}: its entry must be an object")
    kind = str(raw.get("type") or ("http" if "url" in raw else "stdio"))
    strs = _strings(name, env)
    if kind == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command:
            raise McpConfigError(f"MCP server {name!r}: `command` is required for a stdio server")
        args = strs(raw.get("args", []), "args")
        return ServerConfig(name, "stdio", origin, expand(command, env), tuple(args), _mapping(name, raw, "env", env))
    if kind in ("http", "streamable-http"):
        url = raw.get("url")
        if not isinstance(url, str) or not url:
            raise McpConfigError(f"MCP server {name!r}: `url` is required for an http server")
        return ServerConfig(name, "http", origin, url=expand(url, env), headers=_mapping(name, raw, "headers", env))
    if kind == "sse":  # the older HTTP transport, which Claude Code still connects to
        url = raw.get("url")
        if not isinstance(url, str) or not url:
            raise McpConfigError(f"MCP server {name!r}: `url` is required for an sse server")
        return ServerConfig(name, "sse", origin, url=expand(url, env), headers=_mapping(name, raw, "headers", env))
    if kind == "sdk":  # an Agent SDK program's in-process server: reached through the program, never started here
        return ServerConfig(name, "sdk", origin)
    raise McpConfigError(f"MCP server {name!r}: transport type {kind!r} is not supported (use stdio, http or sse)")


def _strings(name: str, env: Mapping[str, str]) -> Any:
    def strs(value: object, key: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise McpConfigError(f"MCP server {name!r}: `{key}` must be a list of strings")
        return [expand(v, env) for v in value]

    return strs


def _mapping(name: str, raw: dict[str, Any], key: str, env: Mapping[str, str]) -> dict[str, str]:
    value = raw.get(key) or {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise McpConfigError(f"MCP server {name!r}: `{key}` must be an object of strings")
    return {str(k): expand(v, env) for k, v in value.items()}


def read_flag(value: str, cwd: Path) -> dict[str, Any]:
    """An `--mcp-config` value: inline JSON, or a JSON file (relative to cwd); its `mcpServers` object."""
    text = value.strip()
    where = "--mcp-config JSON"
    if not text.startswith("{"):
        path = (cwd / Path(value).expanduser()) if not Path(value).expanduser().is_absolute() else Path(value)
        where = f"--mcp-config file {path}"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise McpConfigError(f"cannot read {where}: {e.strerror or e}") from None
    return _servers_of(text, where)


def _servers_of(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as e:
        raise McpConfigError(f"{where} is not valid JSON: {e}") from None
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(f"{where}: `mcpServers` must be an object of servers")
    return servers


def _user_state(cwd: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the user's state, this project's entry in it); empty when missing or unreadable."""
    from agentteams.settings.trust import read_state

    data = read_state()
    projects = data.get("projects")
    entry = None
    # claude writes these keys empty in every project: the scopes' module loads only when one project sets one
    if isinstance(projects, dict) and any(isinstance(p, dict) and any(p.get(k) for k in _PROJECT_KEYS)
                                          for p in projects.values()):  # fmt: skip
        from agentteams.settings.mcp_scopes import project_key

        entry = projects.get(project_key(cwd))  # keyed by the repository's root, if any
    return data, entry if isinstance(entry, dict) else {}


# what a project's entry in the state file holds for its MCP servers (discover reads nothing else of it)
_PROJECT_KEYS = ("mcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers", "enableAllProjectMcpServers")


def approval(name: str, settings: Mapping[str, Any], project: Mapping[str, Any]) -> str | None:
    """Why a `.mcp.json` server may not start (None: approved), by Claude Code's rule: a name in
    `disabledMcpjsonServers` is refused; `enableAllProjectMcpServers` or a name in `enabledMcpjsonServers` approves."""

    def names(key: str) -> list[str]:
        return [str(n) for src in (settings, project) if isinstance(src.get(key), list) for n in src[key]]

    if name in names("disabledMcpjsonServers"):
        return "rejected (disabledMcpjsonServers)"
    if any(src.get("enableAllProjectMcpServers") is True for src in (settings, project)):
        return None
    if name in names("enabledMcpjsonServers"):
        return None
    return "needs approval: add it to enabledMcpjsonServers in .claude/settings.local.json"


def discover(flags: McpFlags, cwd: Path, settings: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Found:
    """Every server this session starts; a later source wins for a name (user < project < local, Claude Code's
    precedence, then the flags); `--strict-mcp-config` keeps the flags' servers only."""
    env = dict(os.environ) if env is None else env
    found, raw = Found(), dict[str, tuple[Origin, object]]()
    if not flags.strict:
        state, project = _user_state(cwd)
        _add(raw, "user", state.get("mcpServers"))
        _project_servers(cwd, settings, project, raw, found)
        _add(raw, "local", project.get("mcpServers"))
        # no settings file's `mcpServers`: claude 2.1.332 reads none (a repository's settings could start a server
        # under us that claude never would)
    for value in flags.configs:
        try:
            raw.update({str(k): ("flag", v) for k, v in read_flag(value, cwd).items()})
        except McpConfigError as e:
            found.problems.append(str(e))
    for name, (origin, entry) in raw.items():
        try:
            found.servers.append(parse_server(name, entry, origin, env))
        except McpConfigError as e:
            found.problems.append(str(e))
    return found


def _add(raw: dict[str, tuple[Origin, object]], origin: Origin, servers: object) -> None:
    if isinstance(servers, dict):
        raw.update({str(k): (origin, v) for k, v in servers.items()})


def _project_servers(
    cwd: Path, settings: Mapping[str, Any], project: Mapping[str, Any], raw: dict[str, tuple[Origin, object]],
    found: Found,
) -> None:  # fmt: skip
    path = cwd / ".mcp.json"
    if not path.is_file():
        return
    try:
        servers = _servers_of(path.read_text(encoding="utf-8"), str(path))
    except (OSError, McpConfigError) as e:
        found.problems.append(str(e))
        return
    for name, entry in servers.items():
        why = approval(str(name), settings, project)
        if why is None:
            raw[str(name)] = ("project", entry)
        else:
            found.pending.append(Pending(str(name), why))
