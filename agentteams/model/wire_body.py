"""A Messages request's body as the JSON bytes sent: tool definitions (most of a request's bytes until the
conversation grows) are encoded once per schema, not on every request of every turn."""

from __future__ import annotations

import json
import threading
from typing import Any

from agentteams import diagnostics

MAX_KEPT = 1024  # tool encodings kept (a few dozen tools, MCP servers' lists re-read now and then)

_encode = json.JSONEncoder(separators=(",", ":")).encode
# id(input_schema) -> (the schema itself, its tool's name, description and cache marker, the tool's JSON)
_kept: dict[int, tuple[Any, tuple[Any, Any, str | None], str]] = {}
_lock = threading.Lock()


# the SDK's own order of a request's fields (its `messages.stream`): the conversation before the system prompt and
# tools, as anything reading the bytes in order (a proxy's log, the mock API's captures) met them before
SDK_ORDER = ("max_tokens", "messages", "model", "cache_control", "container", "context_management", "diagnostics",
             "inference_geo", "metadata", "output_config", "service_tier", "speed", "stop_sequences", "system",
             "temperature", "thinking", "tool_choice", "tools", "top_k", "top_p")  # fmt: skip


def body(params: dict[str, Any]) -> bytes:
    """`params` (build_params' dict, without `extra_headers`) as a streaming request's body, in the SDK's order."""
    diagnostics.debug("API: request to %s, %d messages", params.get("model"), len(params.get("messages") or ()))
    order = sorted(params, key=lambda k: SDK_ORDER.index(k) if k in SDK_ORDER else len(SDK_ORDER))
    parts = [f"{_encode(k)}:{_tools(params[k]) if k == 'tools' else _encode(params[k])}" for k in order]
    return ("{" + ",".join([*parts, '"stream":true']) + "}").encode()


def _tools(tools: list[dict[str, Any]]) -> str:
    return "[" + ",".join(_tool(t) for t in tools) + "]"


def _tool(tool: dict[str, Any]) -> str:
    """A tool's JSON, kept by its schema's identity. Schemas are shared, never written to (build_params): the same
    schema object with the same name, description and cache marker encodes the same."""
    schema = tool.get("input_schema")
    if not isinstance(schema, dict) or set(tool) - {"name", "description", "input_schema", "cache_control"}:
        return _encode(tool)  # a server tool, or one we did not build: as it comes
    marker = tool.get("cache_control")
    key = (tool.get("name"), tool.get("description"), None if marker is None else _encode(marker))
    kept = _kept.get(id(schema))
    if kept is not None and kept[0] is schema and kept[1] == key:
        return kept[2]
    encoded = _encode(tool)
    with _lock:
        if len(_kept) >= MAX_KEPT:
            _kept.clear()
        _kept[id(schema)] = (schema, key, encoded)  # holding the schema keeps its id from being reused
    return encoded
