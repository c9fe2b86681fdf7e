"""The lead's events as Claude Code's stream-json lines (`assistant`, `user`, `stream_event`): one line per block of
an answer, at the block's end when the API's raw events are streamed; one per tool result with its structured detail;
a subagent's attributed to its Task call (run/subagent_lines.py)."""

from __future__ import annotations

from typing import Any

from agentteams.run.stream_blocks import StreamedBlocks


class StreamLines:
    """The lead's events as Claude Code's stream-json lines: one `assistant` line per block of an answer, one `user`
    line per tool result with the tool's structured result, each with a uuid and a timestamp."""

    def __init__(self, options: Any) -> None:
        from agentteams.run.subagent_lines import SubagentLines

        self.options = options  # its session id is read per line: a fork or /clear changes it
        self._details: dict[str, Any] = {}
        self._message_id: str | None = None  # the answer whose raw events are streaming (`stream_event` lines)
        self.subagents = SubagentLines(lambda: self.options.session_id)
        self._blocks = StreamedBlocks()  # with partial messages: each block's line goes out at its end

    def subagent(self, event: Any) -> list[dict[str, Any]]:
        """A foreground subagent's event: the lines Claude Code attributes to its Task call."""
        return self.subagents.sub_event(event, self._line)

    def __call__(self, event: Any) -> list[dict[str, Any]]:
        from agentteams.agent.journal import answer_meta, tool_detail
        from agentteams.store.transcripts.writer import block_message

        if event.kind == "stream_event":  # --include-partial-messages: the API's own event, wrapped
            return [*self._finished_block(event), self._stream_event(event.input)]
        if event.kind == "tool_end" and event.result is not None:
            self._details[event.tool_use_id] = tool_detail(event.result)
        if event.kind in ("tool_start", "tool_end"):
            return self.subagents.main_event(event)
        if event.kind == "compacted":
            return [boundary_line(event, self.options.session_id)]
        synthetic: dict[str, Any] = {"isSynthetic": True} if event.input.get("synthetic") else {}  # --json-schema's
        if event.kind == "user" and (interrupt_mark(event.message) or synthetic):  # claude's, as user lines
            return [self._line("user", event.message, **synthetic)]
        if event.message is None or event.kind not in ("assistant", "tool_results"):
            return []
        blocks = [b for b in event.message.get("content") or [] if isinstance(b, dict)]
        if event.kind == "assistant":
            meta = answer_meta(event, "")
            uuids = [*event.uuids, *[None] * len(blocks)]  # the journal's, one per block (none: no transcript)
            return [self._line("assistant", block_message(b, meta), uuid=u, request_id=meta.request_id)
                    for i, (b, u) in enumerate(zip(blocks, uuids, strict=False))
                    if event.response is None or not self._blocks.was_written(meta.message_id, i)]  # fmt: skip
        details = [self._details.pop(str(b.get("tool_use_id")), None) for b in blocks]
        results = iter(event.uuids)  # the journal's: one per tool result, in order
        return [self._line("user", {"role": "user", "content": [b]}, tool_use_result=d,
                           uuid=next(results, None) if b.get("type") == "tool_result" else None)
                for b, d in zip(blocks, details, strict=True)]  # fmt: skip

    def _finished_block(self, event: Any) -> list[dict[str, Any]]:
        """The block a raw event ended, as its `assistant` line (before the event's own line, as claude orders them):
        the answer's id, model and opening usage, no stop reason yet; its uuid the one the journal named for it."""
        from agentteams.store.transcripts.writer import AssistantMeta, block_message

        finished = self._blocks.feed(event.input)
        if finished is None:
            return []
        message = self._blocks.message
        meta = AssistantMeta(self._blocks.message_id, str(message.get("model") or ""), None, message.get("usage") or {})
        return [self._line("assistant", block_message(finished[1], meta), uuid=next(iter(event.uuids), None))]

    def _stream_event(self, raw: dict[str, Any]) -> dict[str, Any]:
        import uuid

        started = raw.get("message") if raw.get("type") == "message_start" else None
        if isinstance(started, dict) and isinstance(started.get("id"), str):
            self._message_id = started["id"]
        return {"type": "stream_event", "event": raw, "session_id": self.options.session_id,
                "parent_tool_use_id": None, "uuid": str(uuid.uuid4()), "api_message_id": self._message_id}  # fmt: skip

    def _line(self, kind: str, message: dict[str, Any], uuid: str | None = None, **extra: Any) -> dict[str, Any]:
        """One line; its uuid the transcript entry's when the journal wrote one (a program may resume at it)."""
        import uuid as uuidlib

        from agentteams.store.fs.atomic_json import now_iso

        return {"type": kind, "message": message, "parent_tool_use_id": None, "session_id": self.options.session_id,
                "uuid": uuid or str(uuidlib.uuid4()), "timestamp": now_iso(), **extra}  # fmt: skip


def interrupt_mark(message: Any) -> bool:
    from agentteams.agent.turn_types import INTERRUPTED_MARK

    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and content == [{"type": "text", "text": INTERRUPTED_MARK}]


def boundary_line(event: Any, session_id: str) -> dict[str, Any]:
    """The stream-json `system` `compact_boundary` line the Agent SDK reads after a compaction."""
    import uuid

    metadata = {"trigger": event.text, "pre_tokens": event.input.get("pre_tokens")}
    return {"type": "system", "subtype": "compact_boundary", "session_id": session_id, "uuid": str(uuid.uuid4()),
            "compact_metadata": metadata}  # fmt: skip
