"""What is not a JSON object in the store's session records or a session's inbox is said in one line, not dropped
unsaid: a message popped from the inbox is gone from the store once read, so the line is all that is left of it."""

from __future__ import annotations

import logging
from typing import Any, cast

import fakeredis
import pytest

from agentteams.store.redis.peers import RedisPeers, inbox_key


def _peers() -> RedisPeers:
    return RedisPeers(cast(Any, fakeredis.FakeRedis(decode_responses=True)))


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_a_message_that_is_not_an_object_is_said(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    peers = _peers()
    peers.publish("rcv", {"sessionId": "rcv"}, 10_000)
    assert peers.push("rcv", {"frame": {"msg_id": "1"}})
    peers.client.rpush(inbox_key("rcv"), "{not json")
    assert peers.take("rcv", 0.1) == [{"frame": {"msg_id": "1"}}]
    [line] = _lines(caplog)
    assert "a message" in line and "{not json" in line


def test_a_record_that_is_not_an_object_is_said(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    peers = _peers()
    peers.publish("good", {"sessionId": "good"}, 10_000)
    peers.publish("bad", {"sessionId": "bad"}, 10_000)
    peers.client.set("at:peer:bad", "[1, 2]")
    assert peers.live() == [{"sessionId": "good"}]
    [line] = _lines(caplog)
    assert "a session record" in line and "[1, 2]" in line
