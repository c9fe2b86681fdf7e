"""Nodes on the Redis store: a record per node as a key with expiry (`at:node:<name>`), a list of orders per node
that the node pops with a blocking read, and one short-lived list per reply that the ordering lead blocks on."""

from __future__ import annotations

import json

from agentteams.store.fs.atomic_json import epoch_ms, json_object
from agentteams.store.node_records import NodeOrder, NodeRecord, NodeReply
from agentteams.store.paths import team_dir_name
from agentteams.store.redis.connection import Client, Keys, no_permission_error

NODES_KEY = "at:nodes"  # the set of node names ever registered and not removed (a record may have expired)
REPLY_TTL_MS = 60_000  # a reply nobody waits for any more goes by itself
LOG_MAXLEN = 20_000  # transcript lines kept per teammate (about the last few hours of a busy one)
MAX_BLOCK = 1.0  # seconds: the longest one blocking read lasts (a dropped connection is noticed by then)

# KEYS: the team's config, the teammate's log stream; ARGV: the stream's length kept, then the lines
_SHIP = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 2, #ARGV do
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'line', ARGV[i])
end
return 1
"""


def _record_key(name: str) -> str:
    return f"at:node:{name}"


def _orders_key(name: str) -> str:
    return f"at:node:{name}:orders"


def _reply_key(order_id: str) -> str:
    return f"at:reply:{order_id}"


def _log_key(team: str, agent: str) -> str:
    return f"{Keys(team_dir_name(team)).prefix}log:{agent}"  # in the team's hash tag: TeamDelete removes it


class RedisNodes:
    """The node registry and order queues in one Redis database, outside every team's hash tag (a node serves
    any team; no script touches these keys together with a team's)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def register(self, record: NodeRecord) -> None:
        record.updated_at = epoch_ms()
        record.started_at = record.started_at or record.updated_at
        with self.client.pipeline() as pipe:
            pipe.set(_record_key(record.name), json.dumps(record.to_json()), px=record.ttl_ms)
            pipe.sadd(NODES_KEY, record.name)
            pipe.execute()

    def read(self, name: str) -> NodeRecord | None:
        try:
            data = json_object(self.client.get(_record_key(name)))
        except no_permission_error():  # a user without the node keys (a team's own, docs/stores.md): no node for it
            return None
        return None if data is None else NodeRecord.from_json(data)

    def live(self) -> list[NodeRecord]:
        try:
            names = sorted(self.client.smembers(NODES_KEY))
        except no_permission_error():  # as in `read`: its teammates run beside its lead, as without nodes
            return []
        if not names:
            return []
        found = [NodeRecord.from_json(d) if (d := json_object(raw)) else None
                 for raw in self.client.mget([_record_key(n) for n in names])]  # fmt: skip
        return [r for r in found if r is not None]

    def remove(self, name: str) -> None:
        with self.client.pipeline() as pipe:
            pipe.delete(_record_key(name), _orders_key(name))
            pipe.srem(NODES_KEY, name)
            pipe.execute()

    def order(self, node: str, order: NodeOrder) -> None:
        self.client.rpush(_orders_key(node), json.dumps(order.to_json()))

    def take_orders(self, node: str, timeout: float) -> list[NodeOrder]:
        key = _orders_key(node)
        first = self.client.blpop([key], timeout=max(0.01, min(timeout, MAX_BLOCK))) if timeout > 0 else None
        raws = [first[1]] if first else []
        while (more := self.client.lpop(key)) is not None:
            raws.append(more)
        parsed = [json_object(r) for r in raws]
        return [o for o in (NodeOrder.from_json(d) for d in parsed if d) if o is not None]

    def reply(self, reply: NodeReply) -> None:
        key = _reply_key(reply.order_id)
        with self.client.pipeline() as pipe:
            pipe.rpush(key, json.dumps(reply.to_json()))
            pipe.pexpire(key, REPLY_TTL_MS)
            pipe.execute()

    def await_reply(self, order_id: str, timeout: float) -> NodeReply | None:
        import time

        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            found = self.client.blpop([_reply_key(order_id)], timeout=max(0.01, min(left, MAX_BLOCK)))
            if found:
                data = json_object(found[1])
                return None if data is None else NodeReply.from_json(data)
        return None

    def ship_log(self, team: str, agent: str, lines: list[str]) -> None:
        """Appended while the team is there: a teammate's last lines after its team went (deleted, or lost by a
        server that came back empty) leave no key behind."""
        if lines:
            ship = self.client.register_script(_SHIP)
            ship(keys=[Keys(team_dir_name(team)).config, _log_key(team, agent)], args=[LOG_MAXLEN, *lines])

    def read_log(self, team: str, agent: str, cursor: str, timeout: float) -> tuple[list[str], str]:
        block = int(min(timeout, MAX_BLOCK) * 1000) if timeout > 0 else None
        found = self.client.xread({_log_key(team, agent): cursor or "0-0"}, count=1000, block=block)
        lines: list[str] = []
        for _stream, entries in found or []:
            for entry_id, fields in entries:
                lines.append(str(fields.get("line", "")))
                cursor = str(entry_id)
        return lines, cursor
