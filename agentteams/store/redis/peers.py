"""Independent sessions across machines on the Redis store: each session's record as a key with a lease
(`at:peer:<session id>`, gone unless renewed), an index scored by lease end (`at:peers`), an inbox list per session
that it pops with a blocking read, and one short-lived list per message that its sender waits on for the taking."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.store.fs.atomic_json import epoch_ms, json_object
from agentteams.store.redis.connection import Client

INDEX_KEY = "at:peers"  # session id -> the epoch ms its lease ends (an entry past it is a dead session's: dropped)
INBOX_TTL_MS = 60_000  # an inbox nobody pops any more (its session died) goes by itself
ACK_TTL_MS = 30_000  # a taking nobody waits for any more goes by itself
MAX_BLOCK = 1.0  # seconds: the longest one blocking read lasts (a dropped connection or a close is noticed by then)


class PeerStoreError(AgentTeamsError):
    """The Redis store refused or failed a command on session records (no permission for these keys, a lost
    connection): said in one line by whoever needed it."""


@contextlib.contextmanager
def _said() -> Iterator[None]:
    import redis

    try:
        yield
    except redis.RedisError as e:
        raise PeerStoreError(f"the store's session records: {type(e).__name__}: {e}") from None


def _record_key(session_id: str) -> str:
    return f"at:peer:{session_id}"


def inbox_key(session_id: str) -> str:
    return f"at:peer:{session_id}:inbox"


ACK_PREFIX = "at:peerack:"


def ack_key(msg_id: str) -> str:
    return f"{ACK_PREFIX}{msg_id}"


def _objects(raws: Iterable[str], what: str) -> list[dict[str, Any]]:
    """Each raw value that is a JSON object; one line for each that is not (an inbox entry is gone once popped)."""
    out = []
    for raw in raws:
        obj = json_object(raw)
        if obj is None:
            diagnostics.warning("ignoring %s in the store: not a JSON object: %.200r", what, raw)
        else:
            out.append(obj)
    return out


class RedisPeers:
    """Session records and their inboxes in one Redis database, outside every team's hash tag (a session belongs
    to no team; no script touches these keys together)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def publish(self, session_id: str, record: dict[str, Any], lease_ms: int) -> None:
        """Write (or renew) a session's record for `lease_ms`; index entries whose lease ended are dropped."""
        with _said():
            now = epoch_ms()
            with self.client.pipeline(transaction=False) as pipe:
                pipe.set(_record_key(session_id), json.dumps(record, separators=(",", ":")), px=lease_ms)
                pipe.zadd(INDEX_KEY, {session_id: now + lease_ms})
                pipe.zremrangebyscore(INDEX_KEY, "-inf", now)
                pipe.execute()

    def remove(self, session_id: str) -> None:
        with _said(), self.client.pipeline(transaction=False) as pipe:
            pipe.delete(_record_key(session_id), inbox_key(session_id))
            pipe.zrem(INDEX_KEY, session_id)
            pipe.execute()

    def read(self, session_id: str) -> dict[str, Any] | None:
        with _said():
            return json_object(self.client.get(_record_key(session_id)))

    def live(self) -> list[dict[str, Any]]:
        """Every record whose lease still runs."""
        with _said():
            ids = [str(i) for i in self.client.zrangebyscore(INDEX_KEY, epoch_ms(), "+inf")]
            if not ids:
                return []
            raws = self.client.mget([_record_key(i) for i in ids])
            return _objects((raw for raw in raws if raw is not None), "a session record")  # None: its lease ended

    def push(self, session_id: str, entry: dict[str, Any]) -> bool:
        """Queue an entry in a live session's inbox; False when its record is gone (it ended or died)."""
        with _said():
            if not self.client.exists(_record_key(session_id)):
                return False
            with self.client.pipeline(transaction=False) as pipe:
                pipe.rpush(inbox_key(session_id), json.dumps(entry, separators=(",", ":"), ensure_ascii=False))
                pipe.pexpire(inbox_key(session_id), INBOX_TTL_MS)
                pipe.execute()
            return True

    def take(self, session_id: str, timeout: float) -> list[dict[str, Any]]:
        """The entries queued for this session, waiting up to `timeout` (at most MAX_BLOCK) for the first."""
        with _said():
            key = inbox_key(session_id)
            first = self.client.blpop([key], timeout=max(0.01, min(timeout, MAX_BLOCK)))
            raws = [first[1]] if first else []
            while (more := self.client.lpop(key)) is not None:
                raws.append(more)
            return _objects(raws, "a message")

    def taken(self, key: str) -> None:
        """Tell the sender waiting on `key` that its entry was taken."""
        with _said(), self.client.pipeline(transaction=False) as pipe:
            pipe.rpush(key, "1")
            pipe.pexpire(key, ACK_TTL_MS)
            pipe.execute()

    def await_taken(self, key: str, timeout: float) -> bool:
        with _said():
            deadline = time.monotonic() + timeout
            while (left := deadline - time.monotonic()) > 0:
                if self.client.blpop([key], timeout=max(0.01, min(left, MAX_BLOCK))):
                    return True
            return False
