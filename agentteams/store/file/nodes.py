"""Nodes in the file store: a record file per node, an order folder per node, and each order's reply beside it,
waited on with inotify."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_json, epoch_ms, json_object, read_bytes
from agentteams.store.node_records import NodeOrder, NodeRecord, NodeReply, R
from agentteams.store.paths import Layout, path_part


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
        safe_paths.make_dir(self.dir, parents=True)
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
        safe_paths.make_dir(where, parents=True)
        atomic_write_json(where / f"{time.time_ns():020d}-{order.order_id}.json", order.to_json())

    def take_orders(self, node: str, timeout: float) -> list[NodeOrder]:
        where = self._orders_dir(node)
        safe_paths.make_dir(where, parents=True)
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
        safe_paths.make_dir(self.dir / "replies", parents=True)
        atomic_write_json(self.dir / "replies" / f"{path_part(reply.order_id, 'order')}.json", reply.to_json())

    def await_reply(self, order_id: str, timeout: float) -> NodeReply | None:
        path = self.dir / "replies" / f"{path_part(order_id, 'order')}.json"
        safe_paths.make_dir(path.parent, parents=True)
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
    from agentteams.store.fs.watch import FileWatcher

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
