"""Riding out a Redis restart: every command (and blocking read) on a dropped connection is retried with backoff
until the server answers again or a deadline passes, with one line when the store went away and one when it is back.
A store that never answered fails at once: only a connection that worked is waited for."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from redis.backoff import ExponentialWithJitterBackoff
from redis.retry import Retry

from agentteams import diagnostics

T = TypeVar("T")
ENV_DEADLINE = "AGENTTEAMS_STORE_RETRY"  # seconds a lost store is waited for before its error is raised
DEFAULT_DEADLINE = 120.0
QUICK_RETRIES = 3  # before the first answer: a few within about a second, then the error
SAY_AFTER = 0.5  # seconds of failures before the line: a blip that one retry heals is not worth one
clock, pause = time.monotonic, time.sleep  # module-level so a test can run an outage without waiting it out


def deadline_from_env() -> float:
    try:
        return max(0.0, float(os.environ.get(ENV_DEADLINE, "") or DEFAULT_DEADLINE))
    except ValueError:
        return DEFAULT_DEADLINE


class Outage:
    """One store's unreachability as this process saw it: when it began and whether that was said."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.since: float | None = None
        self.said = False
        self.lock = threading.Lock()

    def failed(self, error: Exception, deadline: float) -> None:
        with self.lock:
            now = clock()
            self.since = self.since if self.since is not None else now
            if not self.said and now - self.since >= SAY_AFTER:
                self.said = True
                diagnostics.warning(
                    "the store at %s is unreachable (%s); reconnecting for up to %.0f s", self.where, error, deadline
                )

    def over(self) -> None:
        if self.since is None:
            return
        with self.lock:
            if self.since is not None and self.said:
                diagnostics.warning("the store at %s is back after %.1f s", self.where, clock() - self.since)
            self.since, self.said = None, False

    def waited(self) -> float:
        return 0.0 if self.since is None else clock() - self.since


class Reconnect(Retry):
    """redis-py's retry policy, patient once `armed` (after the store first answered): a connection error is retried
    until `deadline` seconds of outage have passed (shared by every thread of the process), then raised."""

    def __init__(self, where: str, deadline: float) -> None:
        super().__init__(ExponentialWithJitterBackoff(base=0.05, cap=0.5), QUICK_RETRIES)
        self.deadline, self.armed, self.outage = deadline, False, Outage(where)

    def call_with_retry(
        self, do: Callable[[], T], fail: Callable[..., Any], is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:  # fmt: skip
        if not self.armed:
            return super().call_with_retry(do, fail, is_retryable, with_failure_count)
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
                if self.outage.waited() > self.deadline:
                    raise
                pause(self._backoff.compute(failures))
            else:
                self.outage.over()
                return result

    def __deepcopy__(self, memo: dict[int, Any]) -> Reconnect:
        return self  # redis-py copies the policy into each connection: they share one outage and one `armed`

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = Retry.__hash__
