"""A streamed Messages answer gathered into a `ModelResponse` from its events as the API's own JSON: the SDK's stream
builds pydantic models for every event and re-parses a tool's partial input on every delta (quadratic in its size);
here each event is a dict and each tool input is parsed once, when its block ends. Owns the `jiter` dependency."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentteams.model.types import Block, ModelResponse, Usage

TRACKS_INPUT = frozenset({"tool_use", "server_tool_use"})  # blocks whose input arrives as JSON deltas (as the SDK's)
USAGE_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class BadToolInput(ValueError):
    """A tool's input JSON from the model that cannot be parsed even as a partial value."""


class Answer:
    """One answer's message as its events arrive (`feed`), then `response()`. Follows the SDK's accumulation rule by
    rule (tests/model/test_model_answer.py holds the SDK's own result beside ours): a response is the same either
    way."""

    def __init__(self, on_text: Callable[[str], None] | None = None) -> None:
        self.on_text = on_text
        self.message: dict[str, Any] | None = None
        self._inputs: dict[int, str] = {}  # the JSON text of each tool block's input so far, by index

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if self.message is None:
            if kind != "message_start":
                return  # as the SDK's stream: nothing is gathered before the message starts
            message = dict(event["message"])
            message["content"] = list(message.get("content") or [])
            message["usage"] = dict(message.get("usage") or {})
            self.message = message
            return
        content: list[Block] = self.message["content"]
        if kind == "content_block_start":
            content.append(dict(event["content_block"]))
        elif kind == "content_block_delta":
            self._delta(content[event["index"]], event["index"], event["delta"])
        elif kind == "content_block_stop":
            self._settle(content, event["index"])
        elif kind == "message_delta":
            self._message_delta(event)

    def _delta(self, block: Block, index: int, delta: dict[str, Any]) -> None:
        kind, own = delta.get("type"), block.get("type")
        if kind == "text_delta" and own == "text":
            block["text"] = block.get("text", "") + delta["text"]
            if self.on_text is not None:
                self.on_text(delta["text"])
        elif kind == "input_json_delta" and own in TRACKS_INPUT:
            self._inputs[index] = self._inputs.get(index, "") + delta["partial_json"]
        elif kind == "citations_delta" and own == "text":
            block["citations"] = [*(block.get("citations") or []), delta["citation"]]
        elif kind == "thinking_delta" and own == "thinking":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
        elif kind == "signature_delta" and own == "thinking":
            block["signature"] = delta["signature"]

    def _settle(self, content: list[Block], index: int) -> None:
        """A tool block's input, parsed from its whole JSON text (the SDK's last partial parse of the same text)."""
        text = self._inputs.pop(index, "")
        if text:
            content[index]["input"] = _parse_input(text)

    def _message_delta(self, event: dict[str, Any]) -> None:
        assert self.message is not None
        delta, usage = event.get("delta") or {}, event.get("usage") or {}
        for key in ("stop_reason", "stop_sequence", "stop_details"):
            self.message[key] = delta.get(key)
        if delta.get("container") is not None:
            self.message["container"] = delta["container"]
        own = self.message["usage"]
        own["output_tokens"] = usage.get("output_tokens")
        for key in (*USAGE_FIELDS, "server_tool_use", "output_tokens_details"):
            if usage.get(key) is not None:  # totals so far: they replace; one left out keeps message_start's
                own[key] = usage[key]

    def response(self, request_id: str | None) -> ModelResponse | None:
        """The finished answer; None when the stream ended before its stop reason (or before it began)."""
        message = self.message
        if message is None:
            return None
        for index in list(self._inputs):  # a block the stream never closed: its input as far as it came
            self._settle(message["content"], index)
        if message.get("stop_reason") is None:
            return None
        usage = message["usage"]
        return ModelResponse(
            content=[_block(b) for b in message["content"]],
            stop_reason=str(message["stop_reason"]),
            usage=Usage(**{k: int(usage.get(k) or 0) for k in ("output_tokens", *USAGE_FIELDS)}),
            model=str(message.get("model")), request_id=request_id, message_id=str(message.get("id")),
        )  # fmt: skip


def _parse_input(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    from jiter import from_json  # cut short (max_tokens): as far as it came, as the SDK's partial parse gives it

    try:
        return from_json(text.encode(), partial_mode=True)
    except ValueError as e:
        raise BadToolInput(f"Unable to parse tool parameter JSON from model ({e}): {text[:200]}") from None


def _block(block: Block) -> Block:
    """A content block as the transcript keeps it: the API's shape without empty (null) fields."""
    kind = block.get("type")
    if kind == "text":
        out: Block = {"type": "text", "text": block.get("text", "")}
        if block.get("citations"):
            out["citations"] = [_without_nulls(c) for c in block["citations"]]
        return out
    if kind == "tool_use":
        given = block.get("input")
        return {"type": "tool_use", "id": block["id"], "name": block["name"],
                "input": dict(given) if isinstance(given, dict) else {}}  # fmt: skip
    kept: Block = _without_nulls(block)
    kept.pop("parsed_output", None)
    return kept


def _without_nulls(value: Any) -> Any:
    """Null fields dropped at every level, as the SDK's `model_dump(exclude_none=True)` does, but never inside a tool's
    `input`: that is the model's own JSON object, kept whole (the SDK's models hold it as a plain dict)."""
    if isinstance(value, dict):
        return {k: v if k == "input" else _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value
