"""What a lead's or a teammate's next turn is about, and what a teammate's idle notice after it reports."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentteams.agent.session import TurnExtras
from agentteams.store.records import Envelope


@dataclass
class Turn:
    """A lead's turn: the user's prompt, teammates' messages and the runtime's notices."""

    prompt: str | None = None
    envs: list[Envelope] | None = None
    notices: list[str] | None = None
    extras: TurnExtras | None = None  # this turn only (a custom command's front matter)


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
