"""Presence: one small JSON file per agent of ours (pid, pane, backend, state, heartbeat), written only by the agent
it describes (no lock); the lead and `status` read whether it runs, has exited, died, or stopped beating."""

from __future__ import annotations

import contextlib
import functools
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from agentteams import diagnostics
from agentteams.errors import CorruptFileError, UnsafePathError
from agentteams.pids import pid_alive, pid_space
from agentteams.store import write_failures
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_json, epoch_ms, parse_json_bytes, read_bytes
from agentteams.store.paths import Layout

State = Literal["starting", "working", "idle", "awaiting_plan_approval", "stopping", "exited"]
Liveness = Literal["running", "unresponsive", "exited", "dead"]
UNRESPONSIVE_BEATS = 4  # beats missed before an agent counts as unresponsive


@functools.cache
def _here() -> str:
    """This machine's pid space, read once: a process never leaves its own (its forks neither)."""
    return pid_space()


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
    context_tokens: int = 0  # the tokens its conversation takes now, of its model's window: `status` shows the %
    context_window: int = 0
    started_at: int = 0
    busy_since: int = 0  # epoch ms its current turn began; 0: not in a turn
    current_tool: str | None = None  # the tool running now, if any
    asking: bool = False  # waiting on the lead's answer to a permission request (a resumed lead restarts it then)
    updated_at: int = 0  # epoch ms of the last write: the last heartbeat
    heartbeat_ms: int = 0  # how often the agent rewrites this record; 0: it does not beat
    # whose pids `pid` is one of (2.1.330's pidSpace form): a node's agent on another machine is judged by its beats
    pid_space: str = field(default_factory=_here)

    def liveness(self, now_ms: int | None = None) -> Liveness:
        """What the record says of its agent: exited (said so), dead (its pid, on this machine, is gone), unresponsive
        (no beat for UNRESPONSIVE_BEATS beats), else running."""
        if self.state == "exited":
            return "exited"
        if self.pid_space == _here() and not pid_alive(self.pid):  # another machine's pid means nothing here
            return "dead"
        if self.heartbeat_ms > 0 and self.silent_ms(now_ms) > UNRESPONSIVE_BEATS * self.heartbeat_ms:
            return "unresponsive"
        return "running"

    def silent_ms(self, now_ms: int | None = None) -> int:
        """How long since its last write."""
        return (epoch_ms() if now_ms is None else now_ms) - self.updated_at

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
    try:
        safe_paths.make_dir(path.parent)
        atomic_write_json(path, presence.to_json())
    except FileNotFoundError:  # the team was deleted under us: nothing to describe
        return
    except (OSError, UnsafePathError) as e:  # a full or read-only disk, a planted link: the agent goes on
        write_failures.failed("presence", path, e)
    else:
        write_failures.succeeded("presence")


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
