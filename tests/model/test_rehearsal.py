"""The fork server's rehearsal: one streamed call as the client makes it, in memory, leaving nothing behind."""

from __future__ import annotations

import socket
import threading

import pytest

from agentteams.model import rehearsal


def test_rehearsal_runs_on_the_installed_sdk_without_network_or_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fork server suppresses its failure (a warm-up only), so this is where a changed HTTP library would show."""

    def no_network(*args: object) -> None:
        raise AssertionError("the rehearsal opened a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    before = threading.active_count()
    rehearsal.rehearse()
    assert threading.active_count() == before  # a fork server must stay single-threaded
