"""A server's entry as `claude mcp add` and `add-json` build it from their arguments (the same keys, the same
checks, the same one-line refusals), and what `get` and `list` say of an entry."""

from __future__ import annotations

import json
import re
from typing import Any

from agentteams.errors import AgentTeamsError
from agentteams.settings.mcp_scopes import KNOWN_SCOPES, SCOPES, Scope

NAME = re.compile(r"[A-Za-z0-9_-]+")
TRANSPORTS = {"stdio": "stdio", "sse": "sse", "http": "http", "streamable-http": "http"}
JSON_TYPES = ("stdio", "sse", "http", "streamable-http", "ws")
# the keys `add-json` keeps of each kind (Claude Code drops the others)
KEPT = {"stdio": ("type", "command", "args", "env"), "ws": ("type", "url", "headers", "headersHelper")}
REMOTE_KEYS = ("type", "url", "headers", "headersHelper", "oauth")
SECRET_HEADER = re.compile(r"auth|token|key|cookie|secret|passw|credential|session", re.I)


class McpEntryError(AgentTeamsError):
    """An argument `claude mcp` refuses, with its line."""


def check_name(name: str) -> None:
    if not NAME.fullmatch(name):
        raise McpEntryError(f"Invalid name {name}. Names can only contain letters, numbers, hyphens, and underscores.")


def check_scope(value: str, verb: str) -> Scope:
    """A scope a server can be written to or removed from (`verb`: add to / remove from)."""
    if value not in KNOWN_SCOPES:
        raise McpEntryError(f"Invalid scope: {value}. Must be one of: {', '.join(KNOWN_SCOPES)}")
    for scope in SCOPES:
        if scope == value:
            return scope
    raise McpEntryError(f"Cannot {verb} scope: {value}")


def transport_of(value: str | None) -> str:
    if value is None:
        return "stdio"
    if value not in TRANSPORTS:
        raise McpEntryError(f"Invalid transport type: {value}. Must be one of: stdio, sse, http (or streamable-http)")
    return TRANSPORTS[value]


def env_of(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise McpEntryError(f"Invalid environment variable format: {pair}, environment variables should be added "
                                f"as: -e KEY1=value1 -e KEY2=value2")  # fmt: skip
        env[key] = value
    return env


def headers_of(lines: list[str]) -> dict[str, str]:
    headers = {}
    for line in lines:
        key, colon, value = line.partition(":")
        if not colon or not key.strip():
            raise McpEntryError(f'Invalid header format: "{line}". Expected format: "Header-Name: value"')
        headers[key.strip()] = value.strip()
    return headers


def redacted(headers: dict[str, str]) -> dict[str, str]:
    """The headers as `add` echoes them: a value that may be a credential is shown as [REDACTED]."""
    return {k: "[REDACTED]" if SECRET_HEADER.search(k) else v for k, v in headers.items()}


def remote_entry(kind: str, url: str, headers: dict[str, str], client_id: str | None,
                 callback_port: int | None) -> dict[str, Any]:  # fmt: skip
    entry: dict[str, Any] = {"type": kind, "url": url}
    if headers:
        entry["headers"] = headers
    oauth = {k: v for k, v in (("clientId", client_id), ("callbackPort", callback_port)) if v is not None}
    if oauth:
        entry["oauth"] = oauth
    return entry


def _kind(value: object) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "boolean"
    return {str: "string", int: "number", float: "number", list: "array", dict: "object"}.get(type(value), "null")


def json_entry(text: str) -> dict[str, Any]:
    """`add-json`'s entry: the JSON checked, defaults filled (`args`), keys it does not know dropped."""
    try:
        raw = json.loads(text)
    except ValueError:
        raw = None
    if not isinstance(raw, dict):
        raise McpEntryError("Invalid configuration: not a JSON object. Check its quotes, commas and braces.")
    kind = raw.get("type", "stdio")
    if kind not in JSON_TYPES:
        raise McpEntryError('Invalid configuration: unknown "type". Use "stdio", "sse", "http" (or "streamable-http")'
                            ' or "ws".')  # fmt: skip
    wanted: dict[str, str] = {"url": "string", "headers": "object", "headersHelper": "string", "oauth": "object"}
    if kind == "stdio":
        wanted = {"command": "string", "args": "array", "env": "object"}
        raw = {**raw, "args": raw.get("args", [])}
    for key, expected in wanted.items():
        given = raw.get(key)
        if (given is not None or key in ("command", "url")) and _kind(given) != expected:
            raise McpEntryError(f"Invalid configuration: {key}: expected {expected}, received {_kind(given)}")
    for key in ("args",):
        if kind == "stdio" and not all(isinstance(a, str) for a in raw["args"]):
            raise McpEntryError(f"Invalid configuration: {key}: expected an array of strings")
    keep = KEPT.get(kind, REMOTE_KEYS)
    return {k: raw[k] for k in raw if k in keep}


def kind_of(entry: dict[str, Any]) -> str:
    """The entry's transport as `get` names it: stdio, sse, http or ws."""
    kind = str(entry.get("type") or ("http" if "url" in entry else "stdio"))
    return TRANSPORTS.get(kind, kind)


def target(entry: dict[str, Any]) -> str:
    """What `list` shows of an entry after its name: the command line, or the URL and its transport."""
    kind = kind_of(entry)
    if kind == "stdio":
        args = entry["args"] if isinstance(entry.get("args"), list) else []
        return f"{entry.get('command', '')} {' '.join(str(a) for a in args)}"
    return f"{entry.get('url', '')} ({kind.upper()})"


def closest(name: str, names: list[str]) -> str | None:
    """A configured name within two edits of `name`, for "Did you mean"."""

    def distance(a: str, b: str) -> int:
        row = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            prev, row[0] = row[0], i
            for j, cb in enumerate(b, 1):
                prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
        return row[-1]

    near = sorted((distance(name, n), n) for n in names if distance(name, n) <= 2)
    return near[0][1] if near else None
