"""The Redis connection, owner of the `redis` dependency (with redis_retry.py): parses the store URL (`redis://host/db`,
`rediss://` for TLS), takes the password from the environment only, and names every key of a team under one
cluster hash tag (`at:{team}:…`) so a team lives on one shard and a script may touch all of its keys."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agentteams.errors import AgentTeamsError

# A `redis.Redis` (or a pipeline of one) decoding replies to str: redis-py's stubs type every reply as
# `bytes | str | None` whatever the client decodes, so the store's modules take what it documents instead.
Client = Any

STORE_SECRET_VARS = ("AGENTTEAMS_REDIS_PASSWORD", "REDISCLI_AUTH")
PASSWORD_VARS = STORE_SECRET_VARS  # where a password is read from, in this order: the environment, then settings' env
USER_VAR = "AGENTTEAMS_REDIS_USER"  # not a secret: forwarded to teammates with the URL
SCHEMES = ("redis", "rediss")


class StoreUrlError(AgentTeamsError):
    """A store URL that cannot be used; its message is the one line the person reads."""


@dataclass(frozen=True)
class RedisUrl:
    """Where the store is: host, port, database and TLS; never a password (that comes from the environment)."""

    host: str
    port: int
    db: int
    tls: bool

    def __str__(self) -> str:
        return f"{'rediss' if self.tls else 'redis'}://{self.host}:{self.port}/{self.db}"


def is_redis_url(text: str) -> bool:
    return text.split("://", 1)[0].lower() in SCHEMES and "://" in text


def parse_url(text: str) -> RedisUrl:
    """`redis://host[:port][/db]`; a password (or user) in it is refused: URLs end up in argv and logs."""
    parts = urlsplit(text.strip())
    if parts.scheme.lower() not in SCHEMES:
        raise StoreUrlError(f"store URL {text!r}: expected redis://host:port/db or rediss://host:port/db")
    if parts.password is not None or parts.username:
        raise StoreUrlError(
            "the store URL must not hold a password (it would show in process lists): "
            f"put it in {PASSWORD_VARS[0]} instead"
        )
    try:
        port = parts.port or 6379
        db = int(parts.path.strip("/") or 0)
    except ValueError:
        raise StoreUrlError(f"store URL {text!r}: the port and the database must be numbers") from None
    if not parts.hostname:
        raise StoreUrlError(f"store URL {text!r} names no host")
    return RedisUrl(parts.hostname, port, db, parts.scheme.lower() == "rediss")


# the settings files' `env`, as the CLI reads them (store_opt.apply lends it): the store never reads settings itself
_settings_env: Callable[[], Mapping[str, str]] | None = None


def read_settings_env_with(reader: Callable[[], Mapping[str, str]]) -> None:
    """Where `password()` and `user()` look after the environment: the `env` of the settings files in force."""
    global _settings_env
    _settings_env = reader


def password() -> str | None:
    return _configured(PASSWORD_VARS)


def user() -> str | None:
    """The ACL user to log in as (a team's own, see docs/stores.md); None: the server's default user."""
    return _configured((USER_VAR,))


def _configured(names: tuple[str, ...]) -> str | None:
    """From the environment (an agent has put its settings' `env` there already), else from the `env` of the
    settings files a command run here would use (`agentteams task list` loads no settings otherwise)."""
    for var in names:
        if value := os.environ.get(var):
            return value
    env = _settings_env() if _settings_env is not None else {}
    return next((value for var in names if (value := env.get(var))), None)


def connect(url: RedisUrl) -> Client:
    """A client with a connection pool (a blocking read takes a connection of its own from it), checked with one
    PING: an unreachable server or a refused password is one clear line, not a traceback."""
    import redis

    from agentteams.store.redis.retry import ENV_TIMEOUT, Reconnect, deadline_from_env, timeout_from_env

    # before the first answer a few quick retries (an unreachable store is said so within a second); after it, a
    # server that went away (restarted, AOF replayed, paused) is waited for up to the deadline, with one line said;
    # every reply is waited for at most `timeout` (a server that takes connections and never answers)
    timeout = timeout_from_env()
    retry = Reconnect(str(url), deadline_from_env(), timeout)
    client = redis.Redis(
        host=url.host, port=url.port, db=url.db, ssl=url.tls, username=user(), password=password(),
        decode_responses=True, socket_timeout=timeout,
        socket_connect_timeout=timeout, health_check_interval=30, retry=retry,
        redis_connect_func=retry.connected,  # type: ignore[arg-type]  # called with the connection; stubs say none
    )  # fmt: skip
    try:
        client.ping()
    except redis.AuthenticationError as e:
        raise StoreUrlError(f"the store at {url} refused the password ({e}); check {PASSWORD_VARS[0]}") from None
    except redis.TimeoutError:
        raise StoreUrlError(
            f"the store at {url} did not answer within {timeout:.0f} s (it took the connection but sent nothing "
            f"back); set {ENV_TIMEOUT} for a slower one"
        ) from None
    except redis.RedisError as e:
        raise StoreUrlError(f"cannot reach the store at {url}: {e}") from None
    retry.armed = True
    return client


def watch_error() -> type[Exception]:
    """What a transaction raises when a watched key changed under it (the compare-and-set lost: retry)."""
    import redis

    return redis.WatchError


def no_permission_error() -> type[Exception]:
    """What a command raises when the user's ACL does not cover its keys (NOPERM)."""
    import redis

    return redis.exceptions.NoPermissionError


def response_error() -> type[Exception]:
    import redis

    return redis.ResponseError


class Keys:
    """Every key of one team: `at:{team}:…`, the braces the cluster hash tag."""

    def __init__(self, team: str) -> None:
        self.team = team
        self.prefix = f"at:{{{team}}}:"

    @property
    def config(self) -> str:
        return self.prefix + "config"

    @property
    def inboxes(self) -> str:
        return self.prefix + "inboxes"  # a set of the agents with an inbox stream

    def inbox(self, owner: str) -> str:
        return f"{self.prefix}inbox:{owner}"

    @property
    def task_seq(self) -> str:
        return self.prefix + "taskseq"  # the id counter: ids are never reused

    @property
    def task_index(self) -> str:
        return self.prefix + "tasks"  # a sorted set of task ids, scored by id

    def task(self, task_id: str) -> str:
        return f"{self.prefix}task:{task_id}"

    def presence(self, agent: str) -> str:
        return f"{self.prefix}presence:{agent}"

    @property
    def ours(self) -> str:
        return self.prefix + "ours"  # a set of the agents that wrote a presence record and never removed it

    @property
    def changes(self) -> str:
        return self.prefix + "changes"  # `agentteams set` requests waiting for the running lead

    def change_answer(self, request_id: str) -> str:
        return f"{self.prefix}change:{request_id}"

    @property
    def events(self) -> str:
        return self.prefix + "events"  # the team's event stream: task changes (wakes `watch`, later hooks, audit)


TEAMS_KEY = "at:teams"  # the set of team names, for `team list`: the one key outside any team's hash tag
GROUP = "agents"  # every inbox stream's consumer group; the consumer is the inbox's agent
