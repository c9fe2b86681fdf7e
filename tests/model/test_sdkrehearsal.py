"""The fork server's SDK rehearsal: one streamed call through the installed SDK, in memory, leaving nothing behind."""

from __future__ import annotations

import socket
import threading

import pytest

from agentteams.model import sdk_rehearsal


def test_rehearsal_runs_on_the_installed_sdk_without_network_or_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fork server suppresses its failure (a warm-up only), so this is where a changed SDK would show."""

    def no_network(*args: object) -> None:
        raise AssertionError("the rehearsal opened a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    before = threading.active_count()
    sdk_rehearsal.rehearse()
    assert threading.active_count() == before  # a fork server must stay single-threaded


def test_an_sdk_without_its_http_library_is_a_clear_failure() -> None:
    with pytest.raises(ImportError, match="HTTP library"):
        sdk_rehearsal._http_module(type("NotAClient", (), {}))
