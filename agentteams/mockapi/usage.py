"""Realistic `usage` figures: tokens estimated as characters / 4, and a prompt cache simulated per server.

Each breakpoint's prefix (tools → system → messages, `cache_control` removed) is hashed; a hash seen before is read.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from typing import Any

Block = dict[str, Any]


def tokens_for(chars: int) -> int:
    """About one token per four characters, at least 1."""
    return max(1, (chars + 3) // 4)


def estimate_tokens(text: str) -> int:
    return tokens_for(len(text))


def output_tokens(content: list[Block]) -> int:
    """Estimated tokens of an assistant message's content."""
    parts: list[str] = []
    for block in content:
        if block.get("type") == "tool_use":
            parts.append(str(block.get("name", "")) + json.dumps(block.get("input", {}), ensure_ascii=False))
        else:
            parts.append(str(block.get("text", block.get("thinking", ""))))
    return estimate_tokens("".join(parts))


def strip_cache_control(value: Any) -> Any:
    """A deep copy of a JSON value with every `cache_control` key removed."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def _has_breakpoint(item: Any) -> bool:
    return isinstance(item, dict) and item.get("cache_control") is not None


# Claude Code's billing-header system block (it says whether the request is a subagent's) is left out of the prefix:
# were it in, no fork of claude's could read its caller's cache, which claude's forks are made to do
BILLING_HEADER = "x-anthropic-billing-header:"


def _blocks(content: Any) -> list[Any]:
    """Content as blocks: a string is the one text block the API takes it for."""
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": content}] if isinstance(content, str) and content else []


def prefix_items(body: dict[str, Any]) -> Iterator[tuple[Any, bool]]:
    """The request's cacheable items in the API's prefix order, each with whether it carries a breakpoint."""
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        yield {"tool": strip_cache_control(tool)}, _has_breakpoint(tool)
    for block in _blocks(body.get("system")):
        if isinstance(block, dict) and str(block.get("text", "")).startswith(BILLING_HEADER):
            continue
        yield {"system": strip_cache_control(block)}, _has_breakpoint(block)
    messages = body.get("messages")
    for i, msg in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(msg, dict):
            continue
        for block in _blocks(msg.get("content")):
            yield {"m": i, "role": msg.get("role"), "block": strip_cache_control(block)}, _has_breakpoint(block)


LOOKBACK = 20  # blocks before a breakpoint at which the API also looks for a cache hit


def boundaries(body: dict[str, Any]) -> list[tuple[str, int, bool]]:
    """(hash, estimated tokens, has a breakpoint) of the prefix ending at each cacheable item, in order."""
    digest = hashlib.sha256(json.dumps(body.get("model", ""), ensure_ascii=False).encode())
    chars = 0
    out: list[tuple[str, int, bool]] = []
    for item, marked in prefix_items(body):
        canonical = json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest.update(canonical.encode() + b"\n")
        chars += len(canonical)
        out.append((digest.copy().hexdigest(), tokens_for(chars), marked))
    return out


class PromptCache:
    """The prefix hashes this server has written, and the usage they imply for each new request.

    Breakpoints write; a lookup tries each breakpoint and the LOOKBACK boundaries before it, longest hit wins.
    """

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def input_usage(self, body: dict[str, Any], raw: str) -> dict[str, int]:
        """input_tokens, cache_creation_input_tokens and cache_read_input_tokens for this request."""
        total = estimate_tokens(raw)
        points = boundaries(body)
        marks = [i for i, (_, _, marked) in enumerate(points) if marked]
        looked = {j for i in marks for j in range(max(0, i - LOOKBACK + 1), i + 1)}
        with self._lock:
            read = max((points[j][1] for j in looked if points[j][0] in self._seen), default=0)
            created = points[marks[-1]][1] - read if marks and points[marks[-1]][0] not in self._seen else 0
            self._seen.update(points[i][0] for i in marks)
        read = min(read, total)
        created = max(0, min(created, total - read))
        return {
            "input_tokens": total - read - created,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
        }
