"""An in-memory model for unit tests only: answers each request with the next scripted content.

A request beyond the script fails loudly (AssertionError, also kept in `failures` for a call made on a
runtime's worker thread) unless the test opts in to a `default` answer.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from agentteams.model.types import Block, Message, ModelRequest, ModelResponse, StreamCallbacks, Usage


@dataclass(repr=False)
class FakeModel:
    turns: list[list[Block]]
    requests: list[ModelRequest] = field(default_factory=list)
    before_answer: Callable[[int], None] | None = None
    default: Block | list[Block] | None = field(default=None, kw_only=True)  # the answer once the script is done
    failures: list[str] = field(default_factory=list, kw_only=True)  # requests the script had no answer for
    usage: Callable[[int], Usage] | None = field(default=None, kw_only=True)  # request n's usage (else 10 in, 5 out)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def complete(self, request: ModelRequest, callbacks: StreamCallbacks | None = None) -> ModelResponse:
        with self._lock:  # the runtimes call from worker threads: each request gets its own index
            self.requests.append(copy.deepcopy(request))
            n = len(self.requests) - 1
        if callbacks and callbacks.on_open:  # the request has arrived, as the SDK's stream opening says
            callbacks.on_open()
        if self.before_answer:
            self.before_answer(n)
        content = [dict(b) for b in self._script(n, request)]
        for i, block in enumerate(content):
            if block["type"] == "tool_use":
                block.setdefault("id", f"toolu_{n}_{i}")
            elif block["type"] == "text" and callbacks and callbacks.on_text:
                for word in block["text"].split(" "):
                    callbacks.on_text(word + " ")
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        usage = self.usage(n) if self.usage else Usage(input_tokens=10, output_tokens=5)
        return ModelResponse(content, stop, usage, request.model)

    def __repr__(self) -> str:  # short: assertion messages show it
        return f"FakeModel({len(self.turns)} turns, {len(self.requests)} requests, {len(self.failures)} failures)"

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def user_text(self, n: int) -> str:
        """The newest user text of request `n` (0-based): what the model was woken with."""
        with self._lock:
            return last_user_text(self.requests[n].messages)

    def assert_no_failures(self) -> None:
        with self._lock:
            assert not self.failures, "\n".join(self.failures)

    def _script(self, n: int, request: ModelRequest) -> list[Block]:
        if n < len(self.turns):
            return self.turns[n]
        if self.default is not None:
            return self.default if isinstance(self.default, list) else [self.default]
        problem = (
            f"FakeModel: request {n + 1} but the script has {len(self.turns)} turn(s) and no default; "
            f"last user text: {last_user_text(request.messages)[:500]!r}"
        )
        with self._lock:
            self.failures.append(problem)
        raise AssertionError(problem)


def last_user_text(messages: list[Message]) -> str:
    """The text of the newest user message (a tool-result message shows its results' text)."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        parts: list[str] = []
        for block in content or []:
            inner = block.get("text") if block.get("type") == "text" else block.get("content")
            parts.append(inner if isinstance(inner, str) else str(inner))
        return "\n".join(parts)
    return ""


def text(t: str) -> Block:
    return {"type": "text", "text": t}


def tool(name: str, **args: object) -> Block:
    return {"type": "tool_use", "name": name, "input": dict(args)}
