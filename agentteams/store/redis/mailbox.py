"""Inboxes in Redis: one stream per agent (`at:{team}:inbox:<agent>`) with a consumer group whose consumer is the
agent. A message read for a model stays pending in the group until `mark_delivered` acknowledges it (XACK) once it
entered a model request; what a crashed reader never acknowledged is read again by its successor."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from agentteams.errors import AgentTeamsError, ConflictError, NotFoundError
from agentteams.store.api import MAX_TEXT_CHARS, new_envelope
from agentteams.store.paths import agent_name, path_part, refuse_control
from agentteams.store.records import Envelope, TeamConfig
from agentteams.store.redis.connection import GROUP, Client, Keys, response_error

if TYPE_CHECKING:
    from agentteams.store.protocol import Message
    from agentteams.store.redis.teams import RedisTeams

Sealer = Callable[[str, str, Envelope], None]
MAX_SEND_TRIES = 1000  # a config that changes this often under one send means a writer loops: say so
GONE, CHANGED, SENT = 0, 1, 2  # _SEND's answers

# a send in one round trip: the entry (and the inbox's listing) only while the team's config is the one the sender
# resolved its recipient in (compared whole: a few KB, and every Redis, Valkey and fakeredis can); else the config as
# it is now, for the sender to resolve again
_SEND = """
local current = redis.call('GET', KEYS[1])
if not current then return {0} end
if current ~= ARGV[1] then return {1, current} end
redis.call('XADD', KEYS[2], '*', 'env', ARGV[2])
redis.call('SADD', KEYS[3], ARGV[3])
return {2}
"""
Entry = tuple[str, dict[str, str]]  # a stream entry: its id and fields


class RedisMail:
    """The `Mail` protocol over streams; the envelope is kept whole as JSON in the entry's `env` field."""

    def __init__(self, client: Client, teams: RedisTeams, seal: Sealer | None) -> None:
        self.client, self.teams, self.seal = client, teams, seal
        self._send = client.register_script(_SEND)
        self._known: dict[str, tuple[str, TeamConfig]] = {}  # config key -> (its value, that value parsed)

    # -- sending ------------------------------------------------------------------------------------

    def resolve_recipient(self, config: TeamConfig, to: str) -> str:
        refuse_control(to, "recipient")
        member = config.member(to) or config.member(to.split("@", 1)[0])  # as `_names` finds it
        if member is None:
            names = ", ".join(m.name for m in config.members)
            raise NotFoundError(f"{to!r} is not a member of team {config.name!r} (members: {names})")
        return member.name

    def send(
        self, team: str, to: str, text: str, *, sender: str, summary: str | None = None, color: str | None = None
    ) -> Envelope:
        """Append one message to a member's stream; returns once Redis has it (with AOF on, as durable as that)."""
        if len(text) > MAX_TEXT_CHARS:
            raise AgentTeamsError(f"message is {len(text)} characters; the limit is {MAX_TEXT_CHARS}")
        refuse_control(sender, "sender")
        keys = Keys(self.teams.canonical(team))
        known = self._known.get(keys.config)
        if known is not None and not self._names(known[1], to):  # a member who joined since: read the config anew
            known = None
        known = known or self._config(team, keys, self.client.get(keys.config))
        for _ in range(MAX_SEND_TRIES):
            raw, config = known
            name = self.resolve_recipient(config, to)
            tint = color
            if tint is None and (member := config.member(sender)) and member.agent_id != config.lead_agent_id:
                tint = member.color
            env = new_envelope(sender, text, summary=summary, color=tint)
            if self.seal is not None:
                self.seal(config.name, name, env)
            owner = self.inbox_owner(name)
            # one round trip: the entry goes in only while the config is the one its recipient was resolved in (a
            # changed one comes back with the answer); no group is needed to send: its reader makes it at the
            # stream's start, so nothing sent before is skipped
            args = [raw, json.dumps(env.to_json()), owner]
            reply = self._send(keys=[keys.config, keys.inbox(owner), keys.inboxes], args=args)
            if reply[0] == SENT:
                self._known[keys.config] = known
                return env
            known = self._config(team, keys, reply[1] if reply[0] == CHANGED else None)
        raise ConflictError(f"team {team!r}: its config kept changing under {MAX_SEND_TRIES} tries to send")

    @staticmethod
    def _names(config: TeamConfig, to: str) -> bool:
        return config.member(to) is not None or config.member(to.split("@", 1)[0]) is not None

    def _config(self, team: str, keys: Keys, raw: str | None) -> tuple[str, TeamConfig]:
        self._known.pop(keys.config, None)
        config = self.teams.parse(team, keys, raw)  # NotFoundError when the team is gone
        return raw or "", config

    def send_message(self, team: str, to: str, message: Message, *, sender: str) -> Envelope:
        return self.send(team, to, message.to_text(), sender=sender)

    def broadcast(self, team: str, text: str, *, sender: str, summary: str | None = None) -> list[str]:
        config = self.teams.read(team)
        names = [m.name for m in config.members if sender not in (m.name, m.agent_id)]
        for name in names:
            self.send(config.name, name, text, sender=sender, summary=summary)
        return names

    def _pending(self, keys: Keys, owner: str) -> list[Entry]:
        """Take new entries into the agent's pending list, then return the whole list (what it read but never
        acknowledged, before a crash too), in one round trip; none for an inbox never sent to. The group is made
        on first need, at the stream's start."""
        stream = keys.inbox(owner)
        for attempt in range(2):
            with self.client.pipeline(transaction=False) as pipe:
                pipe.exists(stream)
                pipe.xreadgroup(GROUP, owner, {stream: ">"})
                pipe.xreadgroup(GROUP, owner, {stream: "0"})
                there, *reads = pipe.execute(raise_on_error=False)
            if not there:
                return []
            failed = next((r for r in reads if isinstance(r, Exception)), None)
            if failed is None:
                return list(reads[1][0][1]) if reads[1] else []
            if "NOGROUP" not in str(failed) or attempt:
                raise failed
            self._make_group(stream)
        return []

    def _make_group(self, stream: str) -> None:
        try:
            self.client.xgroup_create(stream, GROUP, id="0", mkstream=True)
        except response_error() as e:
            if "BUSYGROUP" not in str(e):  # another reader made it first
                raise

    # -- reading ------------------------------------------------------------------------------------

    def inbox_owner(self, agent: str) -> str:
        return path_part(agent_name(agent))

    def inbox_owners(self, team: str) -> list[str]:
        return sorted(self.client.smembers(Keys(self.teams.canonical(team)).inboxes))

    def _entries(self, team: str, agent: str) -> tuple[Keys, str, list[Entry]]:
        keys = Keys(self.teams.canonical(team))
        owner = self.inbox_owner(agent)
        return keys, owner, self.client.xrange(keys.inbox(owner))

    def unread(self, team: str, agent: str) -> list[Envelope]:
        """Every message not yet acknowledged, oldest first: new ones are taken into the agent's pending list,
        and what it already held (read before a crash, never acknowledged) comes again."""
        keys = Keys(self.teams.canonical(team))
        owner = self.inbox_owner(agent)
        return [env for entry in self._pending(keys, owner) if (env := _envelope(entry, read=False)) is not None]

    def read_live(self, team: str, agent: str) -> list[Envelope]:
        """The whole stream, each message marked read once acknowledged."""
        keys, owner, entries = self._entries(team, agent)
        if not entries:
            return []
        acked = self._acknowledged(keys, owner)
        return [env for e in entries if (env := _envelope(e, read=acked(e[0]))) is not None]

    def read_all(self, team: str, agent: str) -> list[Envelope]:
        return self.read_live(team, agent)  # nothing is archived apart: the stream is the history

    def _acknowledged(self, keys: Keys, owner: str) -> Callable[[str], bool]:
        """Whether an entry id was acknowledged: handed to the group (at or below its last delivered id) and no
        longer pending."""
        groups = self.client.xinfo_groups(keys.inbox(owner))
        last = next((g["last-delivered-id"] for g in groups if g["name"] == GROUP), None)
        if last is None:  # never read: the group is made by the first reader
            return lambda entry_id: False
        pending = {p["message_id"] for p in self.client.xpending_range(keys.inbox(owner), GROUP, "-", "+", 1 << 30)}
        return lambda entry_id: _id(entry_id) <= _id(last) and entry_id not in pending

    # -- delivery -----------------------------------------------------------------------------------

    def mark_delivered(self, team: str, agent: str, delivered: Iterable[Envelope]) -> int:
        """Acknowledge these messages (by identity, never position); returns how many were pending."""
        wanted = {e.identity for e in delivered}
        keys = Keys(self.teams.canonical(team))
        owner = self.inbox_owner(agent)
        if not wanted:
            return 0
        ids = [eid for eid, fields in self._pending(keys, owner) if _identity(fields) in wanted]
        return int(self.client.xack(keys.inbox(owner), GROUP, *ids)) if ids else 0

    def remove_inbox(self, team: str, agent: str) -> None:
        keys = Keys(self.teams.canonical(team))
        owner = self.inbox_owner(agent)
        with self.client.pipeline() as pipe:
            pipe.delete(keys.inbox(owner))
            pipe.srem(keys.inboxes, owner)
            pipe.execute()


def _id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def _envelope(entry: Entry, *, read: bool) -> Envelope | None:
    _, fields = entry
    try:
        env = Envelope.from_json(json.loads(fields.get("env", "")), "inbox entry")
    except ValueError:  # not one of ours (written by hand?): skipped, as a corrupt inbox element is set aside
        return None
    env.read = read
    return env


def _identity(fields: dict[str, Any]) -> tuple[str, ...] | None:
    env = _envelope(("", fields), read=False)
    return env.identity if env is not None else None
