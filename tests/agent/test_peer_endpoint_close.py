"""A session's endpoint among other sessions, once closed, leaves no thread and no file: its record's writer ends, and
its record, key file and socket are gone, a status change made just before the close included; and a notify_when_idle
is never lost to the turn's end."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentteams.agent.peers import PeerEndpoint, PeerWiring
from agentteams.store import peer_records
from agentteams.store.paths import Layout
from agentteams.store.peer_wire import Frame
from tests.support.wait import wait_until


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


def test_a_subscription_made_as_the_turn_ends_is_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """notify_when_idle arriving while busy, and the turn's end coming before it is recorded: the asker is still told
    (it was told to wait for the notice, not to poll)."""
    wiring = PeerWiring(mode=lambda: "default", policy=lambda: None, hear=lambda _t: None, show=lambda _t: None)
    endpoint = PeerEndpoint(Layout(tmp_path / "claude"), "idling", tmp_path, "idling", wiring)
    told: list[str] = []
    monkeypatch.setattr(endpoint, "_notify_idle", lambda msg_id, _address, _text: told.append(msg_id))
    entered, release = threading.Event(), threading.Event()
    asking = threading.Thread(target=endpoint._subscribe, args=(Frame("notify_when_idle", "m1", "uds:/x"),))

    class _Gate:
        """The endpoint's lock; the asker's first taking of it waits until the turn has ended."""

        def __init__(self) -> None:
            self.lock, self.gated = threading.Lock(), True

        def __enter__(self) -> None:
            if self.gated and threading.current_thread() is asking:
                self.gated = False
                entered.set()
                assert release.wait(10.0)
            self.lock.acquire()

        def __exit__(self, *_exc: object) -> None:
            self.lock.release()

    endpoint.busy()
    monkeypatch.setattr(endpoint, "_lock", _Gate())
    asking.start()
    assert entered.wait(10.0)
    endpoint.idle("done")  # the turn ends while the notify_when_idle is on its way in
    release.set()
    asking.join(10.0)
    wait_until(lambda: told == ["m1"], 10, "the idle notice")  # sent from the endpoint's outbox thread
    endpoint.close()


def test_a_turns_end_never_waits_for_a_receiver_that_does_not_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """Each idle notice may wait for its receiver: the turn's end hands them on and returns; a close lets those
    owed go out (a -p run closes as its turn ends), then leaves no thread."""
    wiring = PeerWiring(mode=lambda: "default", policy=lambda: None, hear=lambda _t: None, show=lambda _t: None)
    endpoint = PeerEndpoint(Layout(tmp_path / "claude"), "idling", tmp_path, "idling", wiring)
    answering, told = threading.Event(), []

    def post(address: str, frame: dict[str, object]) -> None:
        if address == "uds:/silent":
            assert answering.wait(30.0)
        told.append(address)

    monkeypatch.setattr(endpoint, "_post", post)
    endpoint.busy()
    for msg_id, address in (("m1", "uds:/silent"), ("m2", "uds:/quick")):
        endpoint._subscribe(Frame("notify_when_idle", msg_id, address))
    ended = threading.Thread(target=endpoint.idle, args=("done",), name="turn-end")
    ended.start()
    ended.join(10.0)
    assert not ended.is_alive(), "the turn's end waited for a session that does not answer"
    assert told == []
    answering.set()
    endpoint.close()
    assert told == ["uds:/silent", "uds:/quick"]  # in order, before the close returned
    worker = endpoint._notices._worker
    assert worker is not None and not worker.is_alive(), "the outbox's thread outlived the endpoint"


def test_a_session_that_closes_while_busy_tells_its_subscribers_it_exited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """As claude 2.1.332 does (tests/interop/test_interop_peers_exit.py): `peer_idle_notice` with `state: "exited"`,
    once, before the close returns; a later idle owes nothing more."""
    wiring = PeerWiring(mode=lambda: "default", policy=lambda: None, hear=lambda _t: None, show=lambda _t: None)
    endpoint = PeerEndpoint(Layout(tmp_path / "claude"), "leaving", tmp_path, "leaving", wiring)
    sent: list[tuple[str, dict[str, object]]] = []
    monkeypatch.setattr(endpoint, "_post", lambda address, frame: sent.append((address, frame)))
    endpoint.busy()
    endpoint._subscribe(Frame("notify_when_idle", "m1", "uds:/asker"))
    endpoint.close()
    [(address, frame)] = sent
    assert address == "uds:/asker"
    assert (frame["action"], frame["orig_msg_id"], frame["state"]) == ("peer_idle_notice", "m1", "exited")
    assert "detail" not in frame
