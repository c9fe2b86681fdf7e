"""The agent's todo list (what TodoWrite keeps) with Claude Code's schema, the lines the REPL and a teammate's pane
show of it, and the list read back from a resumed conversation (its last TodoWrite call that succeeded)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from agentteams.model.types import Message
from agentteams.tools.errors import ToolInputError

TodoStatus = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[str, ...] = get_args(TodoStatus)
TOOL_NAME = "TodoWrite"
MARKS = {"completed": "☒", "in_progress": "◐", "pending": "☐"}


@dataclass(frozen=True)
class Todo:
    content: str
    status: TodoStatus
    active_form: str

    def to_json(self) -> dict[str, str]:
        return {"content": self.content, "status": self.status, "activeForm": self.active_form}


def parse_todos(value: Any) -> tuple[Todo, ...]:
    """The `todos` argument, checked as Claude Code's schema has it (ToolInputError names the bad item)."""
    if not isinstance(value, list):
        raise ToolInputError("`todos` is required and must be a list")
    items = []
    for i, raw in enumerate(value):
        if not isinstance(raw, dict) or set(raw) - {"content", "status", "activeForm"}:
            raise ToolInputError(f"todos[{i}] must be an object with content, status and activeForm only")
        content, status, active = raw.get("content"), raw.get("status"), raw.get("activeForm")
        if not isinstance(content, str) or not content or not isinstance(active, str) or not active:
            raise ToolInputError(f"todos[{i}]: `content` and `activeForm` must be non-empty strings")
        if status not in STATUSES:
            raise ToolInputError(f"todos[{i}].status must be one of {', '.join(STATUSES)}")
        items.append(Todo(content, cast(TodoStatus, status), active))
    return tuple(items)


def todo_lines(items: list[dict[str, Any]]) -> list[str]:
    """How a list is shown: one line per item with its mark (an item in progress by its activeForm)."""
    lines = []
    for item in items:
        status = str(item.get("status"))
        label = item.get("activeForm") if status == "in_progress" else item.get("content")
        lines.append(f"{MARKS.get(status, '☐')} {label}")
    return lines or ["(no todos)"]


class TodoList:
    """One agent's list: replaced whole by each TodoWrite (thread-safe: the UI reads it)."""

    def __init__(self) -> None:
        self._items: tuple[Todo, ...] = ()
        self._lock = threading.Lock()

    @property
    def items(self) -> tuple[Todo, ...]:
        with self._lock:
            return self._items

    def replace(self, items: tuple[Todo, ...]) -> tuple[Todo, ...]:
        """Set the list (one whose items are all completed is done: it empties, as Claude Code's); the old one."""
        kept = () if items and all(t.status == "completed" for t in items) else items
        with self._lock:
            old, self._items = self._items, kept
            return old

    def restore(self, messages: list[Message]) -> None:
        """The list as the conversation left it: the input of its last TodoWrite call that did not fail."""
        failed = {b.get("tool_use_id") for m in messages if m.get("role") == "user" and isinstance(m["content"], list)
                  for b in m["content"] if b.get("type") == "tool_result" and b.get("is_error")}  # fmt: skip
        for message in reversed(messages):
            content = message.get("content")
            calls = [b for b in content if b.get("type") == "tool_use" and b.get("name") == TOOL_NAME
                     and b.get("id") not in failed] if isinstance(content, list) else []  # fmt: skip
            if message.get("role") == "assistant" and calls:
                try:
                    self.replace(parse_todos(calls[-1].get("input", {}).get("todos")))
                except ToolInputError:
                    continue
                return
        self.replace(())
