"""What a teammate's next turn is about, and what the idle notice after it reports."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentteams.store.records import Envelope


@dataclass
class Work:
    """What the next turn is about: rendered messages, or a task this teammate just claimed."""

    prompt: str
    envs: list[Envelope] = field(default_factory=list)
    task_id: str | None = None


@dataclass
class TurnNotes:
    """What the idle notice after a turn reports."""

    peer_dm: str | None = None
    completed_task: str | None = None
