"""What a driven session's prompt carries beyond its text (the host's `origin` stamp, which prompts go in together),
and `/clear` as Claude Code answers it over stream-json: the reset notice, then a new session's init and result."""

from __future__ import annotations

import time
import uuid
from typing import Any

from agentteams.run import headless


def origin(message: dict[str, Any]) -> dict[str, Any] | None:
    """The `origin` the turn's result echoes: only a host's `{"kind": "human"}` stamp (its other keys dropped), as
    Claude Code honours no other kind a program sends."""
    stamp = message.get("origin")
    return {"kind": "human"} if isinstance(stamp, dict) and stamp.get("kind") == "human" else None


def _kind(message: dict[str, Any]) -> Any:
    stamp = message.get("origin")
    return stamp.get("kind") if isinstance(stamp, dict) else stamp


def _is_command(text: str | None) -> bool:
    return text is not None and text.lstrip().startswith("/")


def joins(first: dict[str, Any], first_text: str | None, other: dict[str, Any], other_text: str | None) -> bool:
    """Whether `other`, waiting behind `first`, goes into the same turn: Claude Code joins prompts only of one origin
    kind (any kind, even one it does not echo), and runs a slash command on its own."""
    return not _is_command(first_text) and not _is_command(other_text) and _kind(first) == _kind(other)


def is_clear(prompt: str) -> bool:
    return prompt.strip().partition(" ")[0] == "/clear"


def clear(runtime: Any, options: Any, message: dict[str, Any]) -> int:
    """`/clear` between turns: the old session's reset notice (the new conversation's id, the prompt's uuid, whether
    a person sent it) and its empty task list, the conversation cleared (hooks and all), then the new session's init
    and a local command's empty `success` result; the exit code."""
    from agentteams.store.fs.atomic_json import now_iso

    start, old, stamp = time.monotonic(), options.session_id, origin(message)
    given = message.get("uuid")
    prompt_uuid = given if isinstance(given, str) else str(uuid.uuid4())
    conversation = str(uuid.uuid4())
    human = {"user_message_from_human": True} if stamp else {}
    headless.emit({"type": "conversation_reset", "new_conversation_id": conversation, "uuid": conversation,
                   "trigger": "clear", "user_message_uuid": prompt_uuid, **human, "timestamp": now_iso(),
                   "session_id": old})  # fmt: skip
    headless.emit({"type": "system", "subtype": "background_tasks_changed", "tasks": [], "uuid": str(uuid.uuid4()),
                   "session_id": old})  # fmt: skip
    new = runtime.between_turns("/clear", runtime.session.clear)
    options.session_id = new  # the lines from here on are the new session's
    headless.emit(headless.init_line(runtime.session, options))
    zero = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    ids = {"user_message_uuid": given, "user_message_uuids": [given]} if isinstance(given, str) else {}
    headless.emit({"type": "result", "subtype": "success", "is_error": False, "result": "", "session_id": new,
                   "num_turns": 0, "duration_ms": int((time.monotonic() - start) * 1000), "duration_api_ms": 0,
                   "total_cost_usd": 0, "usage": zero, "modelUsage": {}, "stop_reason": None, "permission_denials": [],
                   **({"origin": stamp} if stamp else {}), **ids, "local_command": "clear",
                   "uuid": str(uuid.uuid4())})  # fmt: skip
    return 0
