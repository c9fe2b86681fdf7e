"""Presence: one small JSON file per running agent of ours (pid, pane, backend, state).

Written only by the agent it describes, so no lock is needed; the lead and `status` read it.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass
from typing import Any, Literal

from agentteams import diagnostics
from agentteams.errors import CorruptFileError, UnsafePathError
from agentteams.store import safefs
from agentteams.store.atomicjson import atomic_write_json, epoch_ms, parse_json_bytes, read_bytes
from agentteams.store.paths import Layout

State = Literal["starting", "working", "idle", "awaiting_plan_approval", "stopping"]


@dataclass
class Presence:
    pid: int
    session_id: str
    backend: str  # "tmux" | "in-process" | "process"
    state: State = "starting"
    pane_id: str = ""
    current_task: str | None = None
    last_message: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    started_at: int = 0
    updated_at: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Presence | None:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        try:
            return cls(**known)
        except TypeError:  # a field missing: not one of ours, or from an incompatible version
            return None


def write_presence(layout: Layout, team: str, agent: str, presence: Presence) -> None:
    path = layout.presence_file(team, agent)
    presence.updated_at = epoch_ms()
    if not presence.started_at:
        presence.started_at = presence.updated_at
    with contextlib.suppress(FileNotFoundError):  # the team was deleted under us: nothing to describe
        safefs.make_dir(path.parent)
        atomic_write_json(path, presence.to_json())


def read_presence(layout: Layout, team: str, agent: str) -> Presence | None:
    try:
        raw = read_bytes(layout.presence_file(team, agent))
    except UnsafePathError as e:  # a planted link says nothing about liveness either; never read through it
        diagnostics.warning("%s", e)
        return None
    if raw is None:
        return None
    try:
        data = parse_json_bytes(raw, layout.presence_file(team, agent))
    except CorruptFileError:  # a torn or foreign file says nothing about liveness
        return None
    return Presence.from_json(data) if isinstance(data, dict) else None


def remove_presence(layout: Layout, team: str, agent: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        layout.presence_file(team, agent).unlink()
