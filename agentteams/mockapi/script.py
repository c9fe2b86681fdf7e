"""The mock server's JSON script: parsing and validating routes, turns and errors into frozen dataclasses.

A bad script is a `ScriptError` (one line, says where); docs/mock-api.md has the format.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentteams.errors import AgentTeamsError

Block = dict[str, Any]

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_STATUS_OF = {v: k for k, v in ERROR_TYPES.items()}
_TURN_KEYS = {"content", "text", "stop_reason", "wait_for", "wait_for_last", "error", "repeat", "usage",
              "delay_ms", "chunk", "delta_delay_ms", "passable", "malformed"}  # fmt: skip
_ERROR_KEYS = {"status", "type", "message", "retry_after", "in_stream"}
_ROUTE_KEYS = {"name", "match", "turns", "idle"}
_MATCH_KEYS = {"system", "any", "first_user", "last_prompt", "last_user", "tools"}
_USAGE_KEYS = {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
PLACEHOLDER = re.compile(r"\{\{re:(.+?)\}\}(?!\})")


class ScriptError(AgentTeamsError):
    """A mock script that cannot be read or does not have the documented shape."""


@dataclass(frozen=True)
class ErrorSpec:
    status: int
    type: str
    message: str
    retry_after: float | None = None
    in_stream: bool = False  # a streaming request gets 200, message_start, then an SSE `error` event


@dataclass(frozen=True)
class Turn:
    content: tuple[Block, ...] = ()
    stop_reason: str | None = None
    wait_for: str | tuple[str, ...] | None = None  # a tuple: every one of them
    wait_for_last: str | None = None
    error: ErrorSpec | None = None
    repeat: int = 1
    usage: dict[str, int] = field(default_factory=dict)
    delay_ms: int = 0
    chunk: int = 12
    delta_delay_ms: int = 0
    passable: bool = False  # skipped when the next turn waits for something this request already holds
    malformed: bool = False  # a stream whose second event's data is not JSON (a broken proxy, a bad deploy)


@dataclass(frozen=True)
class Match:
    system: str | None = None
    any: str | None = None
    first_user: str | None = None
    last_prompt: str | None = None  # in the newest user message with text: the prompt that opened this turn
    last_user: str | None = None  # in the newest user message, tool results and all
    tools: bool | None = None


@dataclass(frozen=True)
class Route:
    name: str
    match: Match
    turns: tuple[Turn, ...]
    idle: Turn


@dataclass(frozen=True)
class Script:
    routes: tuple[Route, ...] = ()
    fallback: Turn = field(default_factory=lambda: text_turn("OK."))


def text_turn(text: str) -> Turn:
    return Turn(content=({"type": "text", "text": text},))


def load_script(source: dict[str, Any] | str | Path) -> Script:
    """A validated script from a dict or a JSON file path."""
    if isinstance(source, dict):
        return parse_script(source, "script")
    path = Path(source)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ScriptError(f"cannot read mock script {path}: {e.strerror or e}") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ScriptError(f"mock script {path} is not valid JSON: {e}") from e
    if not isinstance(data, dict):
        raise ScriptError(f"mock script {path}: the top level must be a JSON object")
    return parse_script(data, str(path))


def parse_script(data: dict[str, Any], where: str) -> Script:
    _check_keys(data, {"routes", "fallback"}, where)
    routes_raw = data.get("routes", [])
    if not isinstance(routes_raw, list):
        raise ScriptError(f"{where}: 'routes' must be a list")
    routes = tuple(_route(r, i, f"{where}: routes[{i}]") for i, r in enumerate(routes_raw))
    names = [r.name for r in routes]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ScriptError(f"{where}: duplicate route names {dupes}")
    fallback = _turn(data["fallback"], f"{where}: fallback") if "fallback" in data else text_turn("OK.")
    return Script(routes=routes, fallback=fallback)


def _check_keys(obj: Any, allowed: set[str], where: str) -> None:
    if not isinstance(obj, dict):
        raise ScriptError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise ScriptError(f"{where}: unknown keys {unknown} (allowed: {sorted(allowed)})")


def _route(raw: Any, index: int, where: str) -> Route:
    _check_keys(raw, _ROUTE_KEYS, where)
    name = raw.get("name", f"route{index}")
    if not isinstance(name, str) or not name:
        raise ScriptError(f"{where}: 'name' must be a non-empty string")
    turns_raw = raw.get("turns", [])
    if not isinstance(turns_raw, list):
        raise ScriptError(f"{where}: 'turns' must be a list")
    turns = tuple(_turn(t, f"{where}.turns[{i}]") for i, t in enumerate(turns_raw))
    idle = _turn(raw["idle"], f"{where}.idle") if "idle" in raw else text_turn("Done.")
    return Route(name=name, match=_match(raw.get("match", {}), f"{where}.match"), turns=turns, idle=idle)


def _match(raw: Any, where: str) -> Match:
    _check_keys(raw, _MATCH_KEYS, where)
    for key in ("system", "any", "first_user", "last_prompt", "last_user"):
        if key in raw and not isinstance(raw[key], str):
            raise ScriptError(f"{where}: '{key}' must be a string")
    if "tools" in raw and not isinstance(raw["tools"], bool):
        raise ScriptError(f"{where}: 'tools' must be true or false")
    return Match(system=raw.get("system"), any=raw.get("any"), first_user=raw.get("first_user"),
                 last_prompt=raw.get("last_prompt"), last_user=raw.get("last_user"),
                 tools=raw.get("tools"))  # fmt: skip


def _turn(raw: Any, where: str) -> Turn:
    """A turn from its JSON; a bare string is shorthand for one text block."""
    if isinstance(raw, str):
        return text_turn(raw)
    _check_keys(raw, _TURN_KEYS, where)
    content = _content(raw, where)
    for key in ("stop_reason", "wait_for_last"):
        if key in raw and not isinstance(raw[key], str):
            raise ScriptError(f"{where}: '{key}' must be a string")
    if not isinstance(raw.get("passable", False), bool):
        raise ScriptError(f"{where}: 'passable' must be true or false")
    wait_for = raw.get("wait_for")
    if isinstance(wait_for, list) and wait_for and all(isinstance(w, str) for w in wait_for):
        wait_for = tuple(wait_for)
    elif wait_for is not None and not isinstance(wait_for, str):
        raise ScriptError(f"{where}: 'wait_for' must be a string or a list of strings")
    return Turn(
        content=content,
        stop_reason=raw.get("stop_reason"),
        wait_for=wait_for,
        wait_for_last=raw.get("wait_for_last"),
        error=_error(raw["error"], f"{where}.error") if "error" in raw else None,
        repeat=_int(raw, "repeat", 1, 1, where),
        usage=_usage(raw.get("usage", {}), f"{where}.usage"),
        delay_ms=_int(raw, "delay_ms", 0, 0, where),
        chunk=_int(raw, "chunk", 12, 1, where),
        delta_delay_ms=_int(raw, "delta_delay_ms", 0, 0, where),
        passable=raw.get("passable", False),
        malformed=raw.get("malformed") is True,
    )


def _content(raw: dict[str, Any], where: str) -> tuple[Block, ...]:
    if "text" in raw and "content" in raw:
        raise ScriptError(f"{where}: give 'text' or 'content', not both")
    if "text" in raw:
        if not isinstance(raw["text"], str):
            raise ScriptError(f"{where}: 'text' must be a string")
        return ({"type": "text", "text": raw["text"]},)
    blocks = raw.get("content", [])
    if not isinstance(blocks, list):
        raise ScriptError(f"{where}: 'content' must be a list of blocks")
    for i, b in enumerate(blocks):
        _block(b, f"{where}.content[{i}]")
    return tuple(blocks)


def _block(b: Any, where: str) -> None:
    if not isinstance(b, dict) or not isinstance(b.get("type"), str):
        raise ScriptError(f"{where}: a block must be an object with a string 'type'")
    if b["type"] == "text" and not isinstance(b.get("text"), str):
        raise ScriptError(f"{where}: a text block needs a string 'text'")
    if b["type"] in ("tool_use", "server_tool_use"):
        if not isinstance(b.get("name"), str):
            raise ScriptError(f"{where}: a {b['type']} block needs a string 'name'")
        if not isinstance(b.get("input", {}), dict):
            raise ScriptError(f"{where}: a {b['type']} block's 'input' must be an object")
    if b["type"] == "web_search_tool_result" and not (
        isinstance(b.get("tool_use_id"), str) and isinstance(b.get("content"), list | dict)
    ):
        raise ScriptError(f"{where}: a web_search_tool_result needs a 'tool_use_id' and a list of results or an error")
    _check_patterns(b, where)


def _check_patterns(value: Any, where: str) -> None:
    if isinstance(value, str):
        for m in PLACEHOLDER.finditer(value):
            try:
                re.compile(m.group(1))
            except re.error as e:
                raise ScriptError(f"{where}: bad pattern in {m.group(0)!r}: {e}") from e
    elif isinstance(value, list):
        for v in value:
            _check_patterns(v, where)
    elif isinstance(value, dict):
        for v in value.values():
            _check_patterns(v, where)


def _error(raw: Any, where: str) -> ErrorSpec:
    _check_keys(raw, _ERROR_KEYS, where)
    etype = raw.get("type")
    status = raw.get("status", _STATUS_OF.get(etype, 500) if isinstance(etype, str) else 500)
    if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 599:
        raise ScriptError(f"{where}: 'status' must be an HTTP error status (400-599)")
    etype = etype if etype is not None else ERROR_TYPES.get(status, "api_error")
    message = raw.get("message", f"mock {etype}")
    if not isinstance(etype, str) or not isinstance(message, str):
        raise ScriptError(f"{where}: 'type' and 'message' must be strings")
    retry = raw.get("retry_after")
    if retry is not None and (isinstance(retry, bool) or not isinstance(retry, int | float) or retry < 0):
        raise ScriptError(f"{where}: 'retry_after' must be a number of seconds >= 0")
    in_stream = raw.get("in_stream", False)
    if not isinstance(in_stream, bool):
        raise ScriptError(f"{where}: 'in_stream' must be true or false")
    return ErrorSpec(status=status, type=etype, message=message, retry_after=retry, in_stream=in_stream)


def _int(raw: dict[str, Any], key: str, default: int, least: int, where: str) -> int:
    value = raw.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ScriptError(f"{where}: '{key}' must be an integer >= {least}")
    return value


def _usage(raw: Any, where: str) -> dict[str, int]:
    _check_keys(raw, _USAGE_KEYS, where)
    for k, v in raw.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ScriptError(f"{where}: '{k}' must be an integer >= 0")
    return dict(raw)
