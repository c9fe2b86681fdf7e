"""The agent's todo list (TodoWrite): its items, as Claude Code's, and the lines the REPL and a pane show."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal

TodoStatus = Literal["pending", "in_progress", "completed"]


@dataclass(frozen=True)
class Todo:
    content: str
    status: TodoStatus
    active_form: str

    def to_json(self) -> dict[str, str]:
        return {"content": self.content, "status": self.status, "activeForm": self.active_form}


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
        """Set the list; returns the old one."""
        with self._lock:
            old, self._items = self._items, items
            return old


def todo_json(items: tuple[Todo, ...]) -> list[dict[str, Any]]:
    return [t.to_json() for t in items]
