"""Riding out a Redis restart, pause or cut: each command waits at most AGENTTEAMS_STORE_TIMEOUT s for its reply and
is retried until the server answers or the outage passes AGENTTEAMS_STORE_RETRY s (then StoreUnavailable, at once until
it is back), with one line each when it went away, was given up on, came back; a store never reached fails at once."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import TimeoutError as RedisTimeout
from redis.retry import Retry

from agentteams import diagnostics
from agentteams.store.outages import StoreUnavailable

T = TypeVar("T")
ENV_DEADLINE = "AGENTTEAMS_STORE_RETRY"  # seconds a lost store is waited for before its commands fail
DEFAULT_DEADLINE = 120.0
ENV_TIMEOUT = "AGENTTEAMS_STORE_TIMEOUT"  # seconds one command waits for its reply (a paused or silent server)
DEFAULT_TIMEOUT = 5.0
MIN_TIMEOUT = 2.0  # above the longest blocking read the store makes (1 s), with room for its reply
QUICK_RETRIES = 3  # before the first answer: a few within about a second, then the error
SAY_AFTER = 0.5  # seconds of failures before the line: a blip that one retry heals is not worth one
clock, pause = time.monotonic, time.sleep  # module-level so a test can run an outage without waiting it out


def _seconds(var: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(var, "") or default))
    except ValueError:
        return default


def deadline_from_env() -> float:
    return _seconds(ENV_DEADLINE, DEFAULT_DEADLINE)


def timeout_from_env() -> float:
    return max(MIN_TIMEOUT, _seconds(ENV_TIMEOUT, DEFAULT_TIMEOUT))


def _connecting(do: Callable[[], Any]) -> bool:
    """Whether redis-py's call is a connection's making (its socket, or a pooled one's check), not a command."""
    name = getattr(do, "__qualname__", "")
    return "Connection.connect" in name or name.endswith("Connection._connect")


def _timed_out(error: Exception) -> bool:
    return isinstance(error, (RedisTimeout, TimeoutError))


class Outage:
    """One store's unreachability as this process saw it: when it began, what was said, and when the last one
    ended (what `steady` measures from)."""

    def __init__(self, where: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.where, self.timeout = where, timeout
        self.since: float | None = None
        self.said = self.gave_up = False
        self.ended = 0  # outages over so far
        self.back_at: float | None = None  # when the last one ended
        self.lock = threading.Lock()

    def failed(self, error: Exception, deadline: float) -> None:
        with self.lock:
            now = clock()
            if self.since is None:  # a command that timed out had been waiting for its reply all that while
                self.since = now - (self.timeout if _timed_out(error) else 0.0)
            waited = now - self.since
            if not self.said and waited >= SAY_AFTER:
                self.said = True
                if _timed_out(error):
                    diagnostics.warning(
                        "the store at %s is not answering (no reply within %.0f s: paused or overloaded?); waiting "
                        "for it for up to %.0f s", self.where, self.timeout, deadline,
                    )  # fmt: skip
                else:
                    said = "the store at %s is unreachable (%s); reconnecting for up to %.0f s"
                    diagnostics.warning(said, self.where, error, deadline)
            if waited > deadline and not self.gave_up:
                self.gave_up = True
                diagnostics.warning(
                    "the store at %s has been away for %.0f s: what needs it fails until it is back", self.where, waited
                )

    def over(self) -> None:
        if self.since is None:
            return
        with self.lock:
            if self.since is not None:
                if self.said:
                    diagnostics.warning("the store at %s is back after %.1f s", self.where, clock() - self.since)
                self.since, self.said, self.gave_up = None, False, False
                self.ended += 1
                self.back_at = clock()

    def waited(self) -> float:
        return 0.0 if self.since is None else clock() - self.since

    def steady(self) -> float:
        """Seconds the store has answered since it was last away: 0 while it is away, inf if it never was."""
        if self.since is not None:
            return 0.0
        return float("inf") if self.back_at is None else clock() - self.back_at


_OUTAGES: dict[str, Outage] = {}


class Reconnect(Retry):
    """redis-py's retry policy, patient once `armed` (after the store first answered): a connection error or a
    command's timeout is retried until `deadline` seconds of outage have passed (shared by every thread of the
    process), then each command fails with StoreUnavailable until the store answers again."""

    def __init__(self, where: str, deadline: float, timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(ExponentialWithJitterBackoff(base=0.05, cap=0.5), QUICK_RETRIES)
        self.deadline, self.armed = deadline, False
        # one per store and process: the clients of a node's teammates say an outage once between them
        self.outage = _OUTAGES.setdefault(where, Outage(where, timeout))
        self.connections = 0  # made so far: a server restarted (even too fast for a failure) is reached on new ones

    def connected(self, connection: Any) -> None:
        """redis-py's hook on each new connection: its handshake and a PING answered (a paused server's kernel
        takes the connection all the same: made is not back), counted."""
        # no health check inside the handshake: its ping reconnects, and a reconnect handshakes again (a server
        # refusing the password made that a recursion); the PING here is the check
        connection.on_connect_check_health(check_health=False)
        connection.send_command("PING", check_health=False)
        connection.read_response()
        self.connections += 1
        self.outage.over()

    def call_with_retry(
        self, do: Callable[[], T], fail: Callable[..., Any], is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:  # fmt: skip
        if not self.armed:  # a server that takes the connection and never answers is said so after one timeout

            def first(error: Exception) -> bool:
                return not _timed_out(error) and (is_retryable is None or is_retryable(error))

            return super().call_with_retry(do, fail, first, with_failure_count)
        failures = 0
        while True:
            try:
                result = do()
            except self._supported_errors as error:
                if is_retryable and not is_retryable(error):
                    raise
                failures += 1
                fail(error, failures) if with_failure_count else fail(error)
                self.outage.failed(error, self.deadline)
                if (waited := self.outage.waited()) > self.deadline:
                    where = self.outage.where
                    raise StoreUnavailable(
                        f"the store at {where} has not answered for {waited:.0f} s ({error})"
                    ) from None
                pause(self._backoff.compute(failures))
            else:
                # back once a command got its answer, or a new connection its PING (`connected`): a socket made, or
                # a pooled one taken, is not (a paused server's kernel takes connections all the same)
                if not _connecting(do):
                    self.outage.over()
                return result

    def __deepcopy__(self, memo: dict[int, Any]) -> Reconnect:
        return self  # redis-py copies the policy into each connection: they share one outage and one `armed`

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = Retry.__hash__
