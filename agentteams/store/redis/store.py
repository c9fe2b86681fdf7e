"""The Redis store: the store interface over one Redis (or Valkey) server, for teams whose members run on several
machines. Presence is a key per agent that expires unless its heartbeat rewrites it; waiting is a blocking read of
the agent's inbox stream (and the team's event stream), never a poll."""

from __future__ import annotations

import json
import select
import threading
import time
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Self

from agentteams import diagnostics
from agentteams.store.fs.atomic_json import epoch_ms, json_object
from agentteams.store.outages import StoreUnavailable
from agentteams.store.paths import team_dir_name
from agentteams.store.presence import UNRESPONSIVE_BEATS, Presence
from agentteams.store.redis.changes import RedisChanges
from agentteams.store.redis.connection import Client, Keys, RedisUrl, connect
from agentteams.store.redis.mailbox import RedisMail
from agentteams.store.redis.nodes import RedisNodes
from agentteams.store.redis.retry import Outage, Reconnect
from agentteams.store.redis.tasks import RedisTasks
from agentteams.store.redis.teams import RedisTeams

if TYPE_CHECKING:
    from agentteams.store.signing import Keyring

PRESENCE_MIN_TTL_MS = 1000  # a record outlives a few missed beats; one that stops beating is gone soon after


def presence_ttl_ms(presence: Presence) -> int | None:
    """How long a presence key lives unrenewed: twice the beats that make its agent unresponsive; an agent that
    does not beat keeps its record until it removes it."""
    if presence.heartbeat_ms <= 0:
        return None
    return max(2 * UNRESPONSIVE_BEATS * presence.heartbeat_ms, PRESENCE_MIN_TTL_MS)


# the record and the agent's place among ours (it stays ours, its lease can run out, after its key expires), only
# while the team's config exists; ARGV[2] is the record's lifetime in ms (0: none)
_WRITE_PRESENCE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if tonumber(ARGV[2]) > 0 then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
else
  redis.call('SET', KEYS[2], ARGV[1])
end
redis.call('SADD', KEYS[3], ARGV[3])
return 1
"""


class RedisPresences:
    """Presence records as `at:{team}:presence:<agent>`, JSON with an expiry refreshed by each heartbeat."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._write = client.register_script(_WRITE_PRESENCE)

    def write(self, team: str, agent: str, presence: Presence) -> None:
        """Only while the team is there, as the files' record needs its team's directory: an agent that outlived
        its team (deleted, or lost by a server that came back empty) leaves no key behind."""
        presence.updated_at = epoch_ms()
        if not presence.started_at:
            presence.started_at = presence.updated_at
        keys = Keys(team_dir_name(team))
        ttl = presence_ttl_ms(presence)
        try:
            self._write(keys=[keys.config, keys.presence(agent), keys.ours],
                        args=[json.dumps(presence.to_json()), ttl or 0, agent])  # fmt: skip
        except StoreUnavailable as e:  # as a file record on a full disk: the next beat writes it again
            diagnostics.debug("presence of %s not written: %s", agent, e)

    def read(self, team: str, agent: str) -> Presence | None:
        data = json_object(self.client.get(Keys(team_dir_name(team)).presence(agent)))
        return Presence.from_json(data) if data is not None else None

    def remove(self, team: str, agent: str) -> None:
        keys = Keys(team_dir_name(team))
        try:
            with self.client.pipeline() as pipe:
                pipe.delete(keys.presence(agent))
                pipe.srem(keys.ours, agent)
                pipe.execute()
        except StoreUnavailable as e:  # it expires by itself; the agent was not beating any more
            diagnostics.debug("presence of %s not removed: %s", agent, e)


SLICE = 0.1  # seconds: the longest a blocking read keeps a `wake` or a readable fd waiting


class StreamWaiter:
    """Wakes on a new entry in any of its streams after the last one it reported (or after its creation): a
    blocking XREAD on a connection of its own, so an entry added between two waits is never missed. A `wake` from
    another thread, or a readable one of `fds`, is seen between blocking reads of at most SLICE seconds."""

    def __init__(self, client: Client, streams: list[str]) -> None:
        self.client = client
        self.last = {s: _last_id(client, s) for s in streams}
        self._woken = threading.Event()

    def wake(self) -> None:
        self._woken.set()

    def wait(self, timeout: float | None = None, *, fds: Iterable[int] = ()) -> bool:
        watched = list(fds)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._woken.is_set():
                self._woken.clear()
                return True
            if watched and select.select(watched, [], [], 0)[0]:
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if self._read(SLICE if left is None else max(0.0, min(SLICE, left))):
                return True
            if left is not None and left <= SLICE:
                return False

    def _read(self, seconds: float) -> bool:
        try:
            if seconds <= 0:
                found = self.client.xread(dict(self.last), count=100)
            else:
                found = self.client.xread(dict(self.last), count=100, block=max(1, int(seconds * 1000)))
        except StoreUnavailable:  # no news from a store that is away (it said so once): the wait's time passes
            time.sleep(seconds)
            return False
        for stream, entries in found or []:
            if entries:
                self.last[stream] = entries[-1][0]
        return bool(found)

    def close(self) -> None:
        """Nothing is held between waits: each blocking read returns its connection to the pool."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:  # fmt: skip
        self.close()


class TeamsWaiter(StreamWaiter):
    """Wakes on any entry in the teams' event streams or in any of their inboxes, an inbox made since too (its
    whole stream is news once)."""

    def __init__(self, client: Client, teams: Sequence[str]) -> None:
        self.client, self.keys = client, [Keys(team_dir_name(t)) for t in teams]
        super().__init__(client, self._streams())

    def _streams(self) -> list[str]:
        out = []
        for keys in self.keys:
            out += [keys.events, *(keys.inbox(o) for o in sorted(self.client.smembers(keys.inboxes)))]
        return out

    def wait(self, timeout: float | None = None, *, fds: Iterable[int] = ()) -> bool:
        for stream in self._streams():
            self.last.setdefault(stream, "0-0")
        return super().wait(timeout, fds=fds)


def _last_id(client: Client, stream: str) -> str:
    newest = client.xrevrange(stream, count=1)
    return str(newest[0][0]) if newest else "0-0"


class RedisStore:
    """Teams, inboxes, tasks and presence in one Redis database."""

    def __init__(self, url: RedisUrl, client: Client | None = None) -> None:
        self.url = url
        self.client = client if client is not None else connect(url)
        self._teams = RedisTeams(self.client, str(url))
        self._mail: RedisMail | None = None
        retry = self.client.get_retry() if hasattr(self.client, "get_retry") else None
        self._retry: Reconnect | None = retry if isinstance(retry, Reconnect) else None
        self._outage: Outage | None = retry.outage if isinstance(retry, Reconnect) else None
        self._tasks = RedisTasks(self.client, self._teams, lambda: self.mail, self.steady)
        self._presence = RedisPresences(self.client)
        self._keyring: Keyring | None = None

    @property
    def teams(self) -> RedisTeams:
        return self._teams

    @property
    def mail(self) -> RedisMail:
        if self._mail is None:
            self._mail = RedisMail(self.client, self._teams, self.keyring.seal)
        return self._mail

    @property
    def tasks(self) -> RedisTasks:
        return self._tasks

    @property
    def changes(self) -> RedisChanges:
        return RedisChanges(self.client)

    @property
    def presence(self) -> RedisPresences:
        return self._presence

    @property
    def nodes(self) -> RedisNodes:
        return RedisNodes(self.client)

    @property
    def keyring(self) -> Keyring:
        if self._keyring is None:
            from agentteams.store.signing import Keyring

            self._keyring = Keyring()
        return self._keyring

    def canonical(self, team: str) -> str:
        return team_dir_name(team)

    def steady(self) -> float:
        """Seconds the server has answered since this process last found it away (inf: never)."""
        return self._outage.steady() if self._outage is not None else float("inf")

    def connections(self) -> int:
        """Connections this process made to the server: one restarted, however fast, is reached on new ones."""
        return self._retry.connections if self._retry is not None else 0

    def watch(self, team: str, agent: str, *, tasks: bool = False) -> StreamWaiter:
        """Wakes on a message to the agent, and with `tasks` on any change of the team's tasks."""
        keys = Keys(self.canonical(team))
        streams = [keys.inbox(self.mail.inbox_owner(agent)), *([keys.events] if tasks else [])]
        return StreamWaiter(self.client, streams)

    def watch_teams(self, teams: Sequence[str]) -> TeamsWaiter:
        """Wakes on a change of these teams: an event (tasks, members) or a message."""
        return TeamsWaiter(self.client, teams)
