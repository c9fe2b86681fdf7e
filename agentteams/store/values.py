"""Values that cross the store interface: a member to add, and what claims, updates and unassignments
report. Kept apart from the Protocols so a command that only reads tasks loads no more than these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentteams.store.records import Task

ClaimReason = Literal["task_not_found", "already_claimed", "already_resolved", "blocked", "agent_busy"]
UNSET: Any = object()  # "leave the owner as it is" (None clears it)


@dataclass(frozen=True)
class NewMember:
    """What a caller knows about a teammate it is about to add."""

    name: str
    agent_type: str | None = None
    model: str | None = None
    prompt: str | None = None
    color: str | None = None
    plan_mode_required: bool = False
    cwd: str | None = None
    backend_type: str | None = None
    tmux_pane_id: str = ""
    mode: str | None = None


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
