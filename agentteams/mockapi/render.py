"""Turning a scripted turn into an API message: `{{re:...}}` echoes, tool_use ids, stop_reason, usage."""

from __future__ import annotations

import copy
import itertools
import re
import threading
from typing import Any

from agentteams.mockapi.reqtext import last_user_text
from agentteams.mockapi.script import PLACEHOLDER, Turn
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
            if out["type"] == "tool_use":
                out.setdefault("id", f"toolu_mock_{self.next_id():04d}")
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
