"""An in-memory model for unit tests only: answers each request with the next scripted content."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from agentteams.model.types import Block, ModelRequest, ModelResponse, StreamCallbacks, Usage


@dataclass
class FakeModel:
    turns: list[list[Block]]
    requests: list[ModelRequest] = field(default_factory=list)
    before_answer: Callable[[int], None] | None = None

    def complete(self, request: ModelRequest, callbacks: StreamCallbacks | None = None) -> ModelResponse:
        self.requests.append(copy.deepcopy(request))
        n = len(self.requests) - 1
        if self.before_answer:
            self.before_answer(n)
        content = self.turns[n] if n < len(self.turns) else [{"type": "text", "text": "Done."}]
        content = [dict(b) for b in content]
        for i, block in enumerate(content):
            if block["type"] == "tool_use":
                block.setdefault("id", f"toolu_{n}_{i}")
            elif block["type"] == "text" and callbacks and callbacks.on_text:
                for word in block["text"].split(" "):
                    callbacks.on_text(word + " ")
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        return ModelResponse(content, stop, Usage(input_tokens=10, output_tokens=5), request.model)


def text(t: str) -> Block:
    return {"type": "text", "text": t}


def tool(name: str, **args: object) -> Block:
    return {"type": "tool_use", "name": name, "input": dict(args)}
