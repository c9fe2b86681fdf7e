"""Provider-neutral request, response and usage types exchanged between the agent loop and a model client.

Content blocks stay in the Messages API's own JSON shape (`{"type": "text", ...}`, `{"type": "tool_use", ...}`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

Block = dict[str, Any]
Message = dict[str, Any]  # {"role": "user" | "assistant", "content": str | list[Block]}


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens

    def to_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


@dataclass
class ToolSpec:
    """What the model is told about one tool."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass
class ModelRequest:
    model: str  # a full model id (aliases are resolved before a request is built)
    system: str
    tools: list[ToolSpec]
    messages: list[Message]
    max_tokens: int = 8192
    agent: str = "main"  # whose request: for usage accounting and logs
    server_tools: list[dict[str, Any]] = field(default_factory=list)  # the API's own tools (web_search_20250305)
    tool_choice: dict[str, Any] | None = None
    thinking: dict[str, Any] | None = None  # the API's own shape: {"type": "enabled", "budget_tokens": N}, ...
    output_config: dict[str, Any] | None = None  # {"effort": ..., "task_budget": ...}
    betas: tuple[str, ...] = ()  # more anthropic-beta values for this request
    context_management: dict[str, Any] | None = None  # the API's own shape: {"edits": [{"type": ...}]}
    turn: bool = False  # an agent's own turn (a lead's, a teammate's, a subagent's), not a side call: its model's
    # defaults apply (model/reasoning.py)


@dataclass
class ModelResponse:
    content: list[Block]
    stop_reason: str
    usage: Usage
    model: str
    request_id: str | None = None
    message_id: str | None = None  # the API's `msg_...` id: a transcript's entries of one answer share it
    api_ms: int = 0  # from sending the request to the answer's end (the SDK's `duration_api_ms` adds these up)


@dataclass
class RetryNotice:
    """Sent to `on_retry` before the client sleeps and tries again."""

    attempt: int
    delay: float
    reason: str


@dataclass
class StreamCallbacks:
    on_text: Callable[[str], None] | None = None
    on_open: Callable[[], None] | None = None  # the answer's stream opened: the request has reached the model
    on_retry: Callable[[RetryNotice], None] | None = None
    on_event: Callable[[dict[str, Any]], None] | None = None  # each raw stream event, as the API sent it
    extra: dict[str, Any] = field(default_factory=dict)


class ModelClient(Protocol):
    """One model call: stream a response, calling back with text as it arrives."""

    def complete(self, request: ModelRequest, callbacks: StreamCallbacks | None = None) -> ModelResponse: ...
