"""Nodes: machines that run teammates a lead places on them. A node's record (expiring unless its heartbeat
rewrites it), its queue of orders from leads, and their replies, as typed values and the `Nodes` protocol both stores
implement (files: store/file/nodes.py, Redis: store/redis/nodes.py)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, Protocol, TypeVar

from agentteams.store.fs.atomic_json import epoch_ms

OrderKind = Literal["spawn", "stop"]
NodeMode = Literal["in-process", "tmux"]
R = TypeVar("R")


def _new_id() -> str:
    import uuid  # on first use: the lead's start-up does not pay for it

    return uuid.uuid4().hex


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The keys of `data` that are fields of `cls` (a newer writer's extra keys are ignored, not refused)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclass
class NodeRecord:
    """What a node says of itself; `running` holds the agent ids (`name@team`) of the teammates it runs now."""

    name: str
    host: str
    slots: int
    version: str
    mode: NodeMode = "in-process"
    pid: int = 0
    running: list[str] = field(default_factory=list)
    started_at: int = 0
    updated_at: int = 0
    ttl_ms: int = 3000  # the record is gone this long after its last beat

    @property
    def free(self) -> int:
        return self.slots - len(self.running)

    def expired(self, now_ms: int | None = None) -> bool:
        return (epoch_ms() if now_ms is None else now_ms) - self.updated_at > self.ttl_ms

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NodeRecord | None:
        try:
            return cls(**_known(cls, data))
        except TypeError:
            return None


@dataclass
class NodeOrder:
    """A lead's order to a node: start a teammate, or stop one. It carries no secret: the node has its own API key
    and environment, and a teammate makes its own signing key; `lead_key` is the lead's *public* verify key."""

    kind: OrderKind
    team: str
    name: str
    order_id: str = field(default_factory=_new_id)
    color: str = "blue"
    model: str = ""
    parent_session_id: str = ""
    permission_mode: str = "default"
    plan_mode_required: bool = False
    agent_type: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    lead_key: str | None = None  # `<ms>.<public key>`, as `--lead-verify-key` takes it
    settings: str | None = None  # the lead's settings for its teammates (Settings.for_teammate: never `env`)
    repo: str | None = None  # a repository URL to clone fresh for this teammate
    commit: str | None = None  # and the commit to check out there

    @property
    def agent_id(self) -> str:
        return f"{self.name}@{self.team}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NodeOrder | None:
        try:
            return cls(**_known(cls, data))
        except TypeError:
            return None


@dataclass
class NodeReply:
    """A node's answer to an order: done (with where the teammate runs), or the one line saying why not."""

    order_id: str
    ok: bool
    error: str = ""
    backend: str = ""
    pane_id: str = ""
    cwd: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NodeReply | None:
        try:
            return cls(**_known(cls, data))
        except TypeError:
            return None


class Nodes(Protocol):
    """The registry of nodes and the orders between leads and nodes."""

    def register(self, record: NodeRecord) -> None: ...  # written (again) with its expiry: the node's heartbeat
    def read(self, name: str) -> NodeRecord | None: ...  # None once expired
    def live(self) -> list[NodeRecord]: ...
    def remove(self, name: str) -> None: ...
    def order(self, node: str, order: NodeOrder) -> None: ...
    def take_orders(self, node: str, timeout: float) -> list[NodeOrder]: ...  # waits up to `timeout` for one
    def reply(self, reply: NodeReply) -> None: ...
    def await_reply(self, order_id: str, timeout: float) -> NodeReply | None: ...
    def ship_log(self, team: str, agent: str, lines: list[str]) -> None: ...  # a node's teammate's transcript lines
    # the lines after `cursor` ("" from the start), waiting up to `timeout` for one, and the cursor after them
    def read_log(self, team: str, agent: str, cursor: str, timeout: float) -> tuple[list[str], str]: ...
