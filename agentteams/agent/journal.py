"""What an agent's events become in its session transcript: prompts, each answer's blocks, each tool result with
its structured detail, and the leaf at every turn's end (Claude Code's schema; the writer is store/transcripts)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from agentteams.agent.loop import AgentEvent
from agentteams.store.transcripts.writer import AssistantMeta, Transcript
from agentteams.tools.base import ToolResult


class Journal:
    """Records one agent's events: the session's own, or a subagent's in its own file (agent/subagent_run.py).

    The transcript is looked up per event: /clear and /resume swap the session's file under a running REPL.
    """

    def __init__(self, transcript: Callable[[], Transcript], agent: str, *,
                 mode: Callable[[], str] | None = None) -> None:  # fmt: skip
        self._transcript = transcript
        self.agent = agent
        self._mode = mode
        self._details: dict[str, Any] = {}  # tool_use id -> what the tool reported, until its result is written
        self._prompt: str | None = None
        self._named: dict[int, str] = {}  # a streamed answer's finished blocks: their entries' uuids, named early

    def __call__(self, event: AgentEvent, model: str) -> None:
        transcript, message = self._transcript(), event.message
        if event.kind == "user" and message is not None:
            content = message.get("content")
            started = self._prompt is None
            if started and isinstance(content, str):
                self._prompt = content
            mode = self._mode() if self._mode and started else None
            written = transcript.prompt(self.agent, content if content is not None else "", mode=mode,
                                        meta=not started)  # fmt: skip
            event.uuids = [written]
        elif event.kind == "stream_event":
            self._name_block(event)
        elif event.kind == "assistant" and message is not None:
            content = list(message.get("content") or [])
            named = [self._named.get(i) for i in range(len(content))]  # an interrupted answer's kept text too
            event.uuids = transcript.assistant(self.agent, content, answer_meta(event, model), named)
            self._named = {}
        elif event.kind == "tool_end" and event.result is not None:
            self._details[event.tool_use_id] = tool_detail(event.result)
        elif event.kind == "tool_results" and message is not None:
            blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
            results = [b for b in blocks if b.get("type") == "tool_result"]
            details = [self._details.pop(str(b.get("tool_use_id")), None) for b in results]
            event.uuids = [transcript.tool_result(self.agent, b, d) for b, d in zip(results, details, strict=True)]
            steered = [b for b in blocks if b.get("type") != "tool_result"]  # what came mid-turn, after the results
            if steered:  # its own user entry: read back, it joins the results' message again
                transcript.prompt(self.agent, steered, meta=True)
        elif event.kind == "turn_end":
            if transcript.agent_id is None:  # a subagent's file has no resume point of its own, as Claude Code's
                transcript.last_prompt(self._prompt)
            self._prompt = None

    def _name_block(self, event: AgentEvent) -> None:
        """A streamed block's end (partial messages on): its entry's uuid, named now, as its stream-json line goes out
        before the answer is whole (run/stream_blocks.py) and must name the entry it will be."""
        raw = event.input
        if raw.get("type") == "message_start":
            self._named = {}
        elif raw.get("type") == "content_block_stop" and isinstance(raw.get("index"), int):
            self._named[raw["index"]] = str(uuid.uuid4())
            event.uuids = [self._named[raw["index"]]]


def answer_meta(event: AgentEvent, model: str) -> AssistantMeta:
    """What an `assistant` event says about its answer besides the content (an id made up when the client gave none)."""
    response, usage = event.response, event.usage
    return AssistantMeta(
        message_id=(response.message_id if response else None) or f"msg_{uuid.uuid4().hex[:24]}",
        model=(response.model if response else "") or model, stop_reason=response.stop_reason if response else None,
        usage=usage.to_json() if usage else {}, request_id=response.request_id if response else None,
    )  # fmt: skip


def tool_detail(result: ToolResult) -> Any:
    """A tool result's `toolUseResult`, as Claude Code's: a failure is its text; a success the tool's structured
    detail when it has one."""
    if result.is_error:
        return f"Error: {result.content}"
    if result.data is None and result.blocks is not None:  # an MCP tool's blocks: claude's detail is the same list
        return result.blocks
    return result.data if result.data is not None else result.content
