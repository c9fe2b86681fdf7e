"""The mock API's prompt cache as a fork meets it: a request that repeats an earlier request's prefix up to that
request's breakpoint reads it, though a string content now comes as a block and Claude Code's billing header says
it is a subagent's."""

from __future__ import annotations

import json
from typing import Any

from agentteams.mockapi.usage import PromptCache

TOOLS = [{"name": "Read", "description": "Reads a file. " * 40, "input_schema": {"type": "object"},
          "cache_control": {"type": "ephemeral"}}]  # fmt: skip
SYSTEM_TEXT = "You are a careful coding agent. " * 40


def body(header: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    system = [{"type": "text", "text": f"x-anthropic-billing-header: cc_version=9; {header}"},
              {"type": "text", "text": SYSTEM_TEXT, "cache_control": {"type": "ephemeral"}}]  # fmt: skip
    return {"model": "m", "tools": TOOLS, "system": system, "messages": messages}


def usage(cache: PromptCache, request: dict[str, Any]) -> dict[str, int]:
    return cache.input_usage(request, json.dumps(request))


def test_a_fork_reads_the_prefix_its_caller_wrote() -> None:
    cache = PromptCache()
    prompt = "Plan the work, then fork. " * 20
    caller = body("", [{"role": "user", "content": [{"type": "text", "text": prompt,
                                                     "cache_control": {"type": "ephemeral"}}]}])  # fmt: skip
    first = usage(cache, caller)
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 300
    fork = body("cc_is_subagent=true;", [
        {"role": "user", "content": prompt},  # the same text, sent as a string this time
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Agent", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "you are the fork"},
                                     {"type": "text", "text": "Directive: X", "cache_control": {"type": "ephemeral"}}]},
    ])  # fmt: skip
    forked = usage(cache, fork)
    assert forked["cache_read_input_tokens"] == first["cache_creation_input_tokens"]


def test_another_conversation_reads_only_the_shared_tools_and_instructions() -> None:
    cache = PromptCache()
    mark = {"cache_control": {"type": "ephemeral"}}
    first = usage(cache, body("", [{"role": "user", "content": [{"type": "text", "text": "one " * 200, **mark}]}]))
    other = usage(cache, body("", [{"role": "user", "content": [{"type": "text", "text": "two " * 200, **mark}]}]))
    # the tools' and the system prompt's breakpoints were written: read; the new message is written
    assert 0 < other["cache_read_input_tokens"] < first["cache_creation_input_tokens"]
    assert (
        other["cache_read_input_tokens"] + other["cache_creation_input_tokens"] == first["cache_creation_input_tokens"]
    )
