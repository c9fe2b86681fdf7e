"""The tool interface: schema, permission target, and `run(args, ctx) -> ToolResult`; a failure is a result.

A tool never prints and never raises for a user-caused problem: it returns `ToolResult(is_error=True)`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from agentteams.model.types import ToolSpec
from agentteams.store.api import Store
from agentteams.store.fs.watch import WakeEvent
from agentteams.tools.errors import ToolInputError
from agentteams.tools.runtime_hooks import RuntimeHooks, TurnSignals

if TYPE_CHECKING:
    from agentteams.tools.shell.background import ShellRegistry
    from agentteams.tools.todos import TodoList

ToolKind = Literal["read", "edit", "execute", "coordinate", "plan", "web"]  # what a tool does, for permissions

__all__ = ["Tool", "ToolContext", "ToolInputError", "ToolKind", "ToolResult", "require_str"]


@dataclass
class ToolResult:
    content: str  # what the model sees
    is_error: bool = False
    data: dict[str, Any] | None = None  # structured detail for the UI and transcripts
    blocks: list[dict[str, Any]] | None = None  # content blocks for the model instead of `content` (a notebook)

    def wire(self, extra: str | None = None) -> str | list[dict[str, Any]]:
        """The tool_result's content: the text or the blocks, and a hook's added context after them."""
        if self.blocks is None:
            return f"{self.content}\n\n{extra}" if extra else self.content
        return [*self.blocks, *([{"type": "text", "text": extra}] if extra else [])]

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(message, is_error=True)


def _shells() -> ShellRegistry:
    from agentteams.tools.shell.background import ShellRegistry  # off the start-up path: most agents run none

    return ShellRegistry()


def _todos() -> TodoList:
    from agentteams.tools.todos import TodoList

    return TodoList()


@dataclass
class ToolContext:
    """Everything a tool may use about the agent that calls it."""

    cwd: Path
    store: Store  # the team's shared state: config, inboxes, tasks
    session_id: str
    agent_name: str = "team-lead"  # our name in a team (the lead is "team-lead")
    team_name: str | None = None  # the team we lead or belong to, if any
    color: str | None = None
    is_lead: bool = True
    plan_file: Path | None = None  # the one file plan mode may write
    read_files: dict[Path, float] = field(default_factory=dict)  # path -> mtime when last Read
    interrupt: threading.Event = field(default_factory=WakeEvent)  # wakes a waiting model call at once
    hooks: RuntimeHooks = field(default_factory=RuntimeHooks)  # what the runtime lends its tools
    signals: TurnSignals = field(default_factory=TurnSignals)  # what the tools tell the runtime
    shells: ShellRegistry = field(default_factory=_shells)  # background commands (subagents share them)
    todos: TodoList = field(default_factory=_todos)  # the agent's todo list (TodoWrite)

    def resolve(self, path: str) -> Path:
        p = Path(path).expanduser()
        return p if p.is_absolute() else (self.cwd / p)


class Tool:
    """Base class; subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_schema: ClassVar[dict[str, Any]]
    kind: ClassVar[ToolKind] = "read"

    @property
    def read_only(self) -> bool:
        return self.kind == "read"

    def runs_beside(self, args: dict[str, Any]) -> bool:
        """May this call run side by side with its answer's neighbouring calls that may too (claude's
        concurrency-safe tools)? Reads may; Task overrides it for the calls that start subagents."""
        return self.read_only

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.input_schema)

    def permission_target(self, args: dict[str, Any], cwd: Path | None = None) -> str | None:
        """The string a rule like `Bash(git:*)` or `Read(~/**)` is matched against (a command, or a path
        made absolute against the agent's `cwd`)."""
        return None

    def check(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """What is wrong with a call before anything else judges it (claude's input validation: an Edit of a file
        that does not exist), or None; its hooks, permission rules and questions come only after it."""
        return None

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


def require_str(args: dict[str, Any], key: str) -> str:
    """An argument that must be a non-empty string; raises ToolInputError otherwise."""
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise ToolInputError(f"`{key}` is required and must be a non-empty string")
    return value
