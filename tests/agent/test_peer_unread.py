"""A frame that carries the right token (or comes through the store) but cannot be read is said in one line: its
sender was told it was taken, so the line is all that is left of it; a control action a newer claude may send is
only a debug line."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest

from agentteams.agent.peer_remote import RemotePeers
from agentteams.agent.peers import PeerEndpoint, PeerWiring
from agentteams.procs.peer_socket import Inbound
from agentteams.store import peer_wire
from agentteams.store.paths import Layout
from agentteams.store.redis.peers import RedisPeers

SENDER = "uds:/tmp/cc-socks-0/1.sock"
BAD_WRAPPER = {"type": "user", "msg_id": "m1", "from": SENDER, "message": {"role": "user", "content": "no wrapper"}}
NEW_CONTROL = {"type": "control", "action": "peer_renamed", "from": SENDER, "msgV": 1, "msg_id": "m2"}


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_a_local_frame_that_cannot_be_read_is_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="agentteams")
    heard: list[str] = []
    wiring = PeerWiring(mode=lambda: "default", policy=lambda: None, hear=heard.append, show=heard.append)
    endpoint = PeerEndpoint(Layout(tmp_path / "claude"), "rcv", tmp_path, "rcv", wiring)
    endpoint._arrived(Inbound(peer_wire.encode(endpoint._token, BAD_WRAPPER), os.getpid()))
    [line] = _warnings(caplog)
    assert "cannot read" in line and "'user'" in line and SENDER in line
    caplog.clear()
    endpoint._arrived(Inbound(peer_wire.encode(endpoint._token, NEW_CONTROL), os.getpid()))
    assert _warnings(caplog) == []
    assert any("peer_renamed" in r.getMessage() for r in caplog.records)  # the debug line
    endpoint._arrived(Inbound(peer_wire.encode("not-its-token", BAD_WRAPPER), os.getpid()))
    assert _warnings(caplog) == [] and heard == []  # another token: dropped unread, as claude drops it


def test_an_inbox_entry_that_cannot_be_read_is_said(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    told: list[str] = []

    class _Store(RedisPeers):
        def __init__(self) -> None:
            super().__init__(None)

        def taken(self, key: str) -> None:
            told.append(key)

    remote = RemotePeers(_Store(), "rcv", "rcv-host")
    entry: dict[str, Any] = {"frame": [1, 2], "ack": "at:peerack:m1"}
    remote._entry(entry)
    [line] = _warnings(caplog)
    assert "not a JSON object" in line and "another machine" in line
    assert told == ["at:peerack:m1"]  # its sender stops waiting
