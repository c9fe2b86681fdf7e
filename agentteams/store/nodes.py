"""Nodes: machines that run teammates a lead places on them. A node's record (expiring unless its heartbeat
rewrites it), its queue of orders from leads, and their replies, as typed values and the `Nodes` protocol both
stores implement (the file store's version is here; the Redis store's in store/redis/nodes.py)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from agentteams.store import safe_fs as safefs
from agentteams.store.atomic_json import atomic_write_json, epoch_ms, json_object, read_bytes
from agentteams.store.paths import Layout, path_part

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


class FileNodes:
    """Nodes under `<config root>/nodes/`: `<name>.json` records, `<name>.orders/` one file per order, `replies/`.
    For nodes sharing one machine's config root (tests, a second checkout); across machines use the Redis store."""

    def __init__(self, layout: Layout) -> None:
        self.dir = layout.root / "nodes"

    def _record_file(self, name: str) -> Path:
        return self.dir / f"{path_part(name, 'node')}.json"

    def _orders_dir(self, name: str) -> Path:
        return self.dir / f"{path_part(name, 'node')}.orders"

    def register(self, record: NodeRecord) -> None:
        record.updated_at = epoch_ms()
        record.started_at = record.started_at or record.updated_at
        safefs.make_dir(self.dir, parents=True)
        atomic_write_json(self._record_file(record.name), record.to_json())

    def read(self, name: str) -> NodeRecord | None:
        record = _load(self._record_file(name), NodeRecord.from_json)
        return None if record is None or record.expired() else record

    def live(self) -> list[NodeRecord]:
        found = [self.read(p.name.removesuffix(".json")) for p in self._listing("*.json")]
        return sorted((r for r in found if r is not None), key=lambda r: r.name)

    def remove(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._record_file(name))

    def order(self, node: str, order: NodeOrder) -> None:
        where = self._orders_dir(node)
        safefs.make_dir(where, parents=True)
        atomic_write_json(where / f"{time.time_ns():020d}-{order.order_id}.json", order.to_json())

    def take_orders(self, node: str, timeout: float) -> list[NodeOrder]:
        where = self._orders_dir(node)
        safefs.make_dir(where, parents=True)
        return _watched(where, lambda: self._take(node), timeout) or []

    def _take(self, node: str) -> list[NodeOrder]:
        taken = []
        with contextlib.suppress(FileNotFoundError):
            for path in sorted(self._orders_dir(node).glob("*.json")):
                order = _load(path, NodeOrder.from_json)
                os.unlink(path)  # taken once, even when unreadable (then dropped: a lead's reply wait says so)
                if order is not None:
                    taken.append(order)
        return taken

    def reply(self, reply: NodeReply) -> None:
        safefs.make_dir(self.dir / "replies", parents=True)
        atomic_write_json(self.dir / "replies" / f"{path_part(reply.order_id, 'order')}.json", reply.to_json())

    def await_reply(self, order_id: str, timeout: float) -> NodeReply | None:
        path = self.dir / "replies" / f"{path_part(order_id, 'order')}.json"
        safefs.make_dir(path.parent, parents=True)
        found = _watched(path.parent, lambda: _load(path, NodeReply.from_json), timeout)
        if found is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        return found

    def ship_log(self, team: str, agent: str, lines: list[str]) -> None:
        """Nothing to ship: nodes on the file store share the lead's machine, where `logs` reads transcripts."""

    def read_log(self, team: str, agent: str, cursor: str, timeout: float) -> tuple[list[str], str]:
        return [], cursor

    def _listing(self, pattern: str) -> list[Path]:
        try:
            return sorted(self.dir.glob(pattern))
        except OSError:
            return []


def _watched(directory: Path, look: Callable[[], R | None], timeout: float) -> R | None:
    """What `look` finds, looking again at each change in `directory` (inotify, no polling) until `timeout` s."""
    from agentteams.store.watch import FileWatcher

    deadline = time.monotonic() + timeout
    with FileWatcher([], dirs=[directory]) as watcher:  # watching before the first look: nothing slips between
        while not (found := look()) and (left := deadline - time.monotonic()) > 0:
            watcher.wait(left)
    return found


def _load(path: Path, parse: Callable[[dict[str, Any]], R | None]) -> R | None:
    try:
        data = json_object(read_bytes(path))
    except OSError:
        return None
    return parse(data) if data is not None else None
