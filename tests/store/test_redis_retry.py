"""The reconnect policy alone (no server): once armed, a dropped store is retried until it answers or the outage
outlasts the deadline, with one line when it went away and one when it is back; before the first answer, a few
quick retries and the error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from agentteams import diagnostics
from agentteams.store.redis import retry as redis_retry
from agentteams.store.redis.retry import Reconnect


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    lines: list[str] = []
    diagnostics.set_sink(lambda level, message: lines.append(message))
    monkeypatch.setattr(redis_retry, "SAY_AFTER", 0.0)
    monkeypatch.setattr(redis_retry, "pause", lambda s: None)  # the backoff's pauses, not the clock
    yield lines
    diagnostics.set_sink(None)


def flaky(failures: int) -> tuple[list[int], object]:
    calls: list[int] = []

    def do() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise redis.ConnectionError("Connection refused")
        return "PONG"

    return calls, do


def test_an_armed_policy_waits_for_the_store_and_says_so_once(said: list[str]) -> None:
    retry = Reconnect("redis://h:1/0", deadline=60)
    retry.armed = True
    calls, do = flaky(40)  # far more than the quick retries
    dropped: list[Exception] = []
    assert retry.call_with_retry(do, dropped.append) == "PONG"  # type: ignore[arg-type]
    assert len(calls) == 41 and len(dropped) == 40  # each failure dropped its connection
    assert len(said) == 2, said
    assert said[0].startswith("the store at redis://h:1/0 is unreachable (Connection refused)")
    assert said[1].startswith("the store at redis://h:1/0 is back after")


def test_past_the_deadline_the_error_is_raised(said: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter(range(0, 10_000, 10))  # every look at the clock: 10 s later
    monkeypatch.setattr(redis_retry, "clock", lambda: float(next(clock)))
    retry = Reconnect("redis://h:1/0", deadline=30)
    retry.armed = True
    _calls, do = flaky(1000)
    with pytest.raises(redis.ConnectionError):
        retry.call_with_retry(do, lambda e: None)  # type: ignore[arg-type]
    assert len(said) == 1 and "reconnecting for up to 30 s" in said[0]


def test_before_the_first_answer_only_a_few_quick_retries(said: list[str]) -> None:
    retry = Reconnect("redis://h:1/0", deadline=60)
    calls, do = flaky(1000)
    with pytest.raises(redis.ConnectionError):
        retry.call_with_retry(do, lambda e: None)  # type: ignore[arg-type]
    assert len(calls) == redis_retry.QUICK_RETRIES + 1 and said == []


def test_every_connection_shares_one_policy() -> None:
    import copy

    retry = Reconnect("redis://h:1/0", deadline=60)
    assert copy.deepcopy(retry) is retry  # redis-py copies it per connection: arming it arms them all
