"""Server-sent events for a streamed message, in the order and shapes the Messages API sends them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

Event = tuple[str, dict[str, Any]]


MALFORMED = "malformed"  # an event name of ours: sent as a content delta whose data is not JSON


def encode(name: str, data: dict[str, Any]) -> bytes:
    if name == MALFORMED:
        return b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"ty\n\n'
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def message_events(message: dict[str, Any], chunk: int) -> Iterator[Event]:
    """message_start, ping, each block's start / deltas / stop, message_delta, message_stop."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**usage, "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        yield from block_events(index, block, chunk)
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]}
    yield "message_delta", {"type": "message_delta", "delta": delta, "usage": usage}
    yield "message_stop", {"type": "message_stop"}


def block_events(index: int, block: dict[str, Any], chunk: int) -> Iterator[Event]:
    kind = block["type"]
    if kind == "text":
        opening: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"], chunk)]
    elif kind in ("tool_use", "server_tool_use"):  # the API streams a server tool's input as it does a tool's
        opening = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
        partial = json.dumps(block.get("input", {}), ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(partial, chunk)]
    elif kind == "thinking":
        opening = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(block.get("thinking", ""), chunk)]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "mock-signature")})
    else:  # any other block arrives whole
        opening, deltas = block, []
    yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}
    for delta in deltas:
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": index}


def error_body(etype: str, message: str, request_id: str | None = None) -> dict[str, Any]:
    """The API's error shape (also the data of an SSE `error` event)."""
    body: dict[str, Any] = {"type": "error", "error": {"type": etype, "message": message}}
    if request_id:
        body["request_id"] = request_id
    return body
