"""TodoWrite: the agent's todo list with Claude Code's schema, the lines the REPL and a teammate's pane show of it,
and the list read back from a resumed conversation (its last TodoWrite call that succeeded)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, cast, get_args

from agentteams.model.types import Message
from agentteams.tools.base import Tool, ToolContext, ToolInputError, ToolResult

TodoStatus = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[str, ...] = get_args(TodoStatus)
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
            calls = [b for b in content if b.get("type") == "tool_use" and b.get("name") == TodoWriteTool.name
                     and b.get("id") not in failed] if isinstance(content, list) else []  # fmt: skip
            if message.get("role") == "assistant" and calls:
                try:
                    self.replace(parse_todos(calls[-1].get("input", {}).get("todos")))
                except ToolInputError:
                    continue
                return
        self.replace(())


class TodoWriteTool(Tool):
    name = "TodoWrite"
    description = (
        "Keep your todo list for this session: the user sees it as your plan. Send the whole list every time (it "
        "replaces the last one); each item has `content`, `status` (pending, in_progress or completed) and "
        "`activeForm` (the label shown while it is in progress). Keep one item in progress at a time."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The whole updated todo list",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {"type": "string", "minLength": 1},
                    },
                    "required": ["content", "status", "activeForm"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["todos"],
        "additionalProperties": False,
    }
    kind = "plan"  # it only records the agent's own plan: allowed in every mode, plan mode included

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        items = parse_todos(args.get("todos"))
        old = ctx.todos.replace(items)
        counts = {s: sum(t.status == s for t in items) for s in STATUSES}
        text = (
            f"The todo list is updated ({counts['in_progress']} in progress, {counts['pending']} pending, "
            f"{counts['completed']} completed). Keep it current as you work, and go on with the task in progress."
        )
        return ToolResult(text, data={"oldTodos": [t.to_json() for t in old], "newTodos": [t.to_json() for t in items]})
