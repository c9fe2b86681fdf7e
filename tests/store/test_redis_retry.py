"""The reconnect policy alone (no server): once armed, a dropped store is retried until it answers or the outage
outlasts the deadline, with one line when it went away and one when it is back; before the first answer, a few
quick retries and the error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from agentteams import diagnostics
from agentteams.store.outages import StoreUnavailable
from agentteams.store.redis import retry as redis_retry
from agentteams.store.redis.retry import Reconnect


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    lines: list[str] = []
    diagnostics.set_sink(lambda level, message: lines.append(message))
    monkeypatch.setattr(redis_retry, "SAY_AFTER", 0.0)
    monkeypatch.setattr(redis_retry, "pause", lambda s: None)  # the backoff's pauses, not the clock
    monkeypatch.setattr(redis_retry, "_OUTAGES", {})  # one per store and process: a test's own
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
    with pytest.raises(StoreUnavailable, match="has not answered for"):
        retry.call_with_retry(do, lambda e: None)  # type: ignore[arg-type]
    assert len(said) == 2 and "reconnecting for up to 30 s" in said[0], said
    assert "has been away for" in said[1] and "fails until it is back" in said[1]
    calls, again = flaky(1000)  # past the deadline a command fails at once, and says nothing more
    with pytest.raises(StoreUnavailable):
        retry.call_with_retry(again, lambda e: None)  # type: ignore[arg-type]
    assert len(calls) == 1 and len(said) == 2, said
    assert retry.outage.steady() == 0.0  # still away: nothing is judged from it


def silent(failures: int) -> tuple[list[int], object]:
    """A server that takes the connection and never answers: each try times out."""
    calls: list[int] = []

    def do() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise redis.TimeoutError("Timeout reading from socket")
        return "PONG"

    return calls, do


def test_a_silent_store_is_said_to_be_not_answering_and_back(said: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(redis_retry, "clock", lambda: now[0])
    monkeypatch.setattr(redis_retry, "SAY_AFTER", 0.5)
    retry = Reconnect("redis://h:1/0", deadline=60, timeout=5)
    retry.armed = True
    assert retry.outage.steady() == float("inf")  # never away
    calls, do = silent(3)
    assert retry.call_with_retry(do, lambda e: None) == "PONG"  # type: ignore[arg-type]
    # the first timeout had waited 5 s already: said at once, in words that say what is wrong
    assert len(said) == 2 and len(calls) == 4, said
    assert said[0] == (
        "the store at redis://h:1/0 is not answering (no reply within 5 s: paused or overloaded?); waiting for it for "
        "up to 60 s"
    )
    assert said[1].startswith("the store at redis://h:1/0 is back after 5.0 s")
    assert retry.outage.ended == 1 and retry.outage.steady() == 0.0
    now[0] += 3
    assert retry.outage.steady() == 3.0


def test_before_the_first_answer_a_silent_store_is_not_retried(said: list[str]) -> None:
    retry = Reconnect("redis://h:1/0", deadline=60, timeout=5)
    calls, do = silent(1000)
    with pytest.raises(redis.TimeoutError):
        retry.call_with_retry(do, lambda e: None)  # type: ignore[arg-type]
    assert len(calls) == 1 and said == []  # one timeout is the answer: connect() says it in one line


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


class FakeConnection:
    """Named as redis-py's are: making one (a socket, or a pooled one's check) is not an answer."""

    def _connect(self) -> str:
        return "a socket"

    def connect(self, retry: Reconnect) -> None:
        retry.call_with_retry(self._connect, lambda e: None)


def test_a_connection_made_is_not_the_store_back(said: list[str]) -> None:
    """A paused server's kernel still takes connections: only an answer ends the outage."""
    retry = Reconnect("redis://h:1/0", deadline=60, timeout=5)
    retry.armed = True
    assert Reconnect("redis://h:1/0", deadline=60).outage is retry.outage  # one per store and process
    tries: list[int] = []

    def command() -> str:
        FakeConnection().connect(retry)  # its connect, inside the command
        tries.append(1)
        if len(tries) < 3:
            raise redis.TimeoutError("Timeout reading from socket")
        return "PONG"

    assert retry.call_with_retry(command, lambda e: None) == "PONG"
    assert len(said) == 2 and "is not answering" in said[0] and "is back after" in said[1], said
    FakeConnection().connect(retry)  # and a connection taken alone
    assert retry.outage.ended == 1
