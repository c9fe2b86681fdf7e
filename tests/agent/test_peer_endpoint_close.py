"""A session's endpoint among other sessions, once closed, leaves no thread and no file: its record's writer ends, and
its record, key file and socket are gone, a status change made just before the close included."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentteams.agent.peers import PeerEndpoint, PeerWiring
from agentteams.store import peer_records
from agentteams.store.paths import Layout


def _writers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "peer-record"}


def test_close_ends_the_record_writer_and_removes_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTTEAMS_STORE", raising=False)  # this machine's sessions only
    layout = Layout(tmp_path / "claude")
    wiring = PeerWiring(mode=lambda: "default", policy=lambda: None, hear=lambda _t: None, show=lambda _t: None)
    endpoint = PeerEndpoint(layout, "closing-session", tmp_path, "closing", wiring)
    before = _writers()
    endpoint.start()
    record = endpoint.record
    assert record is not None
    [writer] = _writers() - before
    endpoint.busy()  # a write in flight as the session closes must not bring the record back
    endpoint.close()
    writer.join(5.0)
    assert not writer.is_alive(), "the record's writer outlived the endpoint"
    assert sorted(peer_records.sessions_dir(layout).iterdir()) == []
    assert not Path(record.socket_path).exists()
