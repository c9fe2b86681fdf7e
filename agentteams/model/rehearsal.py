"""One streamed Messages call as `AnthropicClient` makes it, against an in-memory transport: a fork server's
rehearsal, so each forked teammate's first real request and answer skip the first-use costs of the HTTP stack, the
request's headers and our reader (each builds and caches what it needs on first use)."""

from __future__ import annotations

import json
from typing import Any

from agentteams.model import http_wire
from agentteams.model.answer import Answer
from agentteams.model.anthropic_client import build_params
from agentteams.model.config import ModelConfig
from agentteams.model.first_party import FirstParty
from agentteams.model.types import ModelRequest, ToolSpec

_USAGE = {"input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
_EVENTS: list[dict[str, Any]] = [
    {"type": "message_start", "message": {"id": "msg_rehearsal", "type": "message", "role": "assistant",
     "model": "rehearsal", "content": [], "stop_reason": None, "stop_sequence": None, "usage": _USAGE}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_r", "name": "t",
     "input": {}}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
    {"type": "content_block_stop", "index": 1},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
     "usage": {"output_tokens": 1}},
    {"type": "message_stop"},
]  # fmt: skip


def rehearse() -> None:
    """Build, send and read back one request as `AnthropicClient` does, without a network: nothing leaves."""
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in _EVENTS).encode()

    class Canned:
        def post(self, url: str, headers: dict[str, str], content: bytes, timeout: float) -> http_wire.WireResponse:
            return http_wire.canned(200, {"content-type": "text/event-stream"}, body)

        def close(self) -> None:
            pass

    wire = FirstParty(ModelConfig(api_key="rehearsal", base_url="http://127.0.0.1:9"), wire=Canned())
    tool = ToolSpec("t", "rehearsal", {"type": "object", "properties": {}})
    params = build_params(ModelRequest(model="rehearsal", system="s", tools=[tool], max_tokens=8,
                                       messages=[{"role": "user", "content": "hi"}]))  # fmt: skip
    gathered = Answer()
    try:
        wire.answer(params, None, gathered)
        if gathered.response(None) is None:
            raise RuntimeError("the rehearsal's answer did not finish")
    finally:
        wire.close()
