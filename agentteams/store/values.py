"""Values that cross the store interface: what claims, updates and unassignments report (a member to add
is `store.api.NewMember`). Kept apart from the Protocols so a command that only reads tasks loads no more than these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from agentteams.store.records import Task

ClaimReason = Literal["task_not_found", "already_claimed", "already_resolved", "blocked", "agent_busy"]
UNSET: Any = object()  # "leave the owner as it is" (None clears it)


class BoardTask(NamedTuple):
    """A task as a board view shows it (`status`, `watch`): read without building a record, never written back."""

    id: str
    subject: str
    status: str
    owner: str | None
    blocked_by: list[str]
    blocks: list[str]

    @classmethod
    def of(cls, task: Task) -> BoardTask:
        return cls(task.id, task.subject, task.status, task.owner, list(task.blocked_by), list(task.blocks))

    @property
    def resolved(self) -> bool:
        return self.status in ("completed", "deleted")


@dataclass(repr=False, eq=False)
class ClaimResult:
    success: bool
    task: Task | None = None
    reason: ClaimReason | None = None
    busy_with: list[str] = field(default_factory=list)


@dataclass(repr=False, eq=False)
class UpdateResult:
    task: Task
    updated: list[str]  # JSON names of the fields that changed, for "Updated task #2 owner, blockedBy"
    assignment_sent: bool = False


@dataclass(repr=False, eq=False)
class UnassignResult:
    tasks: list[Task]  # what went back to pending, unowned
