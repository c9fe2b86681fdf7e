"""Through the Redis store a signature is all that vouches for a sender: a frame is handed on only when it is signed
with the key in its sender's record there and names this session as its receiver, and only once; an entry's taking
is told only on a taking list, never on another key it names."""

from __future__ import annotations

from typing import Any

from agentteams.agent.peer_remote import RemotePeers
from agentteams.store import peer_records, peer_wire
from agentteams.store.peer_records import SessionRecord
from agentteams.store.peer_wire import Frame
from agentteams.store.redis.peers import RedisPeers, ack_key
from agentteams.store.signing import SigningKey


class _Store(RedisPeers):
    """The records a test put there; what is pushed or told taken, kept."""

    def __init__(self) -> None:
        super().__init__(None)
        self.records: dict[str, dict[str, Any]] = {}
        self.told: list[str] = []

    def read(self, session_id: str) -> dict[str, Any] | None:
        return self.records.get(session_id)

    def push(self, session_id: str, entry: dict[str, Any]) -> bool:
        self.records.setdefault(f"inbox:{session_id}", {}).setdefault("entries", []).append(entry)
        return session_id in self.records

    def taken(self, key: str) -> None:
        self.told.append(key)

    def await_taken(self, key: str, timeout: float) -> bool:
        return True


def _publish(store: _Store, session_id: str, key: SigningKey, host: str) -> None:
    record = peer_records.new_record(session_id, "/w", session_id, f"/tmp/{session_id}.sock", "interactive", "cli",
                                     key.public)  # fmt: skip
    store.records[session_id] = {**record.to_json(), peer_records.HOST_FIELD: host}


def _receiver(store: _Store) -> tuple[RemotePeers, list[tuple[Frame, SessionRecord]]]:
    got: list[tuple[Frame, SessionRecord]] = []
    remote = RemotePeers(store, "rcv", "rcv-host")
    remote._arrived = lambda frame, sender: got.append((frame, sender))
    return remote, got


def test_only_a_signed_frame_addressed_to_this_session_is_handed_on_once() -> None:
    store = _Store()
    key, other = SigningKey.generate(), SigningKey.generate()
    _publish(store, "snd", key, "snd-host")
    _publish(store, "rcv", other, "rcv-host")
    remote, got = _receiver(store)
    sender = RemotePeers(store, "snd", "snd-host")
    target = peer_records.remote_record(store.records["rcv"])
    assert target is not None and target.address == "redis:rcv" and target.host == "rcv-host"

    frame = peer_wire.user_frame(sender.address, "snd", "prompting", "hello")
    sender.post(target, frame, key)
    [entry] = store.records["inbox:rcv"]["entries"]
    assert entry["ack"] == ack_key(frame["msg_id"]) and entry["frame"][peer_wire.TO_FIELD] == "redis:rcv"

    unsigned = {k: v for k, v in entry["frame"].items() if k != peer_wire.SIG_FIELD}
    forged = {**unsigned, peer_wire.SIG_FIELD: other.sign(peer_wire.signed_bytes(unsigned))}
    elsewhere = {**unsigned, peer_wire.TO_FIELD: "redis:someone-else"}
    elsewhere[peer_wire.SIG_FIELD] = key.sign(peer_wire.signed_bytes(elsewhere))
    for bad in (unsigned, forged, elsewhere):
        remote._entry({"frame": bad, "ack": "at:team-config"})
    assert got == [] and store.told == [], "none handed on; no key but a taking list told"

    remote._entry(entry)
    remote._entry(entry)  # queued again: handled once, told taken each time
    assert [(f.body, s.name, s.host) for f, s in got] == [("hello", "snd", "snd-host")]
    assert store.told == [entry["ack"]] * 2


def test_a_local_sender_cannot_pass_through_the_store() -> None:
    store = _Store()
    key = SigningKey.generate()
    _publish(store, "snd", key, "snd-host")
    remote, got = _receiver(store)
    frame = peer_wire.user_frame("uds:/tmp/snd.sock", "snd", "prompting", "hello")
    frame[peer_wire.TO_FIELD] = remote.address
    frame[peer_wire.SIG_FIELD] = key.sign(peer_wire.signed_bytes(frame))
    remote._entry({"frame": frame, "ack": ack_key(frame["msg_id"])})
    assert got == []


def test_a_record_without_its_host_is_not_a_remote_session() -> None:
    record = peer_records.new_record("s", "/w", "s", "/tmp/s.sock", "interactive", "cli", None).to_json()
    assert peer_records.remote_record(record) is None
    found = peer_records.remote_record({**record, peer_records.HOST_FIELD: "h"})
    assert found is not None and found.address == "redis:s"
    local = SessionRecord.from_json({**record, peer_records.HOST_FIELD: "h"})
    assert local is not None and local.address == "uds:/tmp/s.sock", "a local record's host field is not believed"
