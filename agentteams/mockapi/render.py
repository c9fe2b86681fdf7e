"""Turning a scripted turn into an API message: `{{re:...}}` echoes, tool_use ids, stop_reason, usage.

Also the fallback's answer to a structured-output request: a small JSON value that fits the asked schema.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import re
import threading
from typing import Any

from agentteams.mockapi.reqtext import last_user_text
from agentteams.mockapi.script import PLACEHOLDER, Turn, text_turn
from agentteams.mockapi.usage import output_tokens

Block = dict[str, Any]
UNMATCHED = "UNMATCHED"


def substitute(value: Any, haystacks: tuple[str, ...]) -> Any:
    """`value` with each "{{re:PATTERN}}" replaced by group 1 (or the whole match) of PATTERN's first hit."""
    if isinstance(value, str):
        return PLACEHOLDER.sub(lambda m: _capture(m.group(1), haystacks), value)
    if isinstance(value, list):
        return [substitute(v, haystacks) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, haystacks) for k, v in value.items()}
    return value


def _capture(pattern: str, haystacks: tuple[str, ...]) -> str:
    for hay in haystacks:
        found = re.search(pattern, hay)
        if found:
            return found.group(1) if found.re.groups else found.group(0)
    return UNMATCHED


def output_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema the request wants its answer to follow (`output_config.format`, or `output_format`)."""
    config = body.get("output_config")
    for fmt in (config.get("format") if isinstance(config, dict) else None, body.get("output_format")):
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
            schema: dict[str, Any] = fmt["schema"]
            return schema
    return None


def _number(value: Any, default: int) -> int | float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else default


def schema_instance(schema: Any, name: str = "value", depth: int = 0) -> Any:
    """A small value valid against `schema`: its const or first enum value, else one built from its type.

    Objects get their required properties (all of them when none are listed); strings say `mock <name>`.
    """
    if not isinstance(schema, dict) or depth > 8:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return schema_instance(schema[key][0], name, depth + 1)
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    props = schema.get("properties")
    if kind == "object" or (kind is None and isinstance(props, dict)):
        props = props if isinstance(props, dict) else {}
        required = schema.get("required")
        names = [k for k in (required if isinstance(required, list) else props) if isinstance(k, str)]
        return {k: schema_instance(props.get(k, {}), k, depth + 1) for k in names}
    if kind == "array":
        return [schema_instance(schema.get("items", {}), name, depth + 1)] * int(_number(schema.get("minItems"), 0))
    if kind in ("integer", "number"):
        return _number(schema.get("minimum"), 0)
    if kind == "boolean":
        return False
    if kind == "string":
        return f"mock {name}".ljust(int(_number(schema.get("minLength"), 0)), "x")
    return None


def structured_fallback(turn: Turn, body: dict[str, Any]) -> Turn:
    """`turn`, or for a request that asks for structured output, a turn answering with a fitting JSON value.

    A turn that is an error, or whose text already parses as JSON, is left as it is.
    """
    schema = output_schema(body)
    if schema is None or turn.error is not None:
        return turn
    text = "".join(b.get("text", "") for b in turn.content if b.get("type") == "text")
    try:
        json.loads(text)
    except ValueError:
        answer = text_turn(json.dumps(schema_instance(schema), ensure_ascii=False))
        return dataclasses.replace(turn, content=answer.content, stop_reason=None)
    return turn


class Renderer:
    """Numbers messages and tool_use ids across the server's life and builds message objects."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def content(self, turn: Turn, body: dict[str, Any], raw: str) -> list[Block]:
        haystacks = (last_user_text(body), raw)
        blocks: list[Block] = []
        for block in turn.content:
            out: Block = substitute(copy.deepcopy(block), haystacks)
            if out["type"] in ("tool_use", "server_tool_use"):
                prefix = "toolu" if out["type"] == "tool_use" else "srvtoolu"
                out.setdefault("id", f"{prefix}_mock_{self.next_id():04d}")
                out.setdefault("input", {})
            blocks.append(out)
        return blocks

    def message(self, turn: Turn, body: dict[str, Any], raw: str, input_usage: dict[str, int]) -> dict[str, Any]:
        """The complete non-streaming message object answering `body` with `turn`."""
        content = self.content(turn, body, raw)
        stop = turn.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
        usage = {**input_usage, "output_tokens": output_tokens(content), **turn.usage}
        model = body.get("model")
        return {
            "id": f"msg_mock_{self.next_id():06d}",
            "type": "message",
            "role": "assistant",
            "model": model if isinstance(model, str) else "claude-mock",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
