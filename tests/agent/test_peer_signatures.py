"""A frame from a session of ours is believed only with its signature under the key in that session's record; a
session makes its key at its first message to one of ours (never at start), and puts it in its record first."""

from __future__ import annotations

from pathlib import Path

from agentteams.agent.peer_inbound import verified_sender
from agentteams.agent.peers import PeerEndpoint, PeerWiring
from agentteams.store import peer_records, peer_wire
from agentteams.store.paths import Layout
from agentteams.store.signing import SigningKey


def _endpoint(layout: Layout, cwd: Path) -> PeerEndpoint:
    wiring = PeerWiring(mode=lambda: "default", policy=lambda: None, hear=lambda _t: None, show=lambda _t: None)
    return PeerEndpoint(layout, "receiver-session", cwd, "receiver", wiring)


def _sender(layout: Layout, cwd: Path, key: SigningKey | None) -> peer_records.SessionRecord:
    record = peer_records.new_record("sender-session", str(cwd), "sender", "/tmp/peer-test.sock", "interactive",
                                     "cli", key.public if key else None)  # fmt: skip
    peer_records.write_record(layout, record)
    return record


def test_a_frame_of_ours_needs_its_signature(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "claude")
    key, other = SigningKey.generate(), SigningKey.generate()
    sender = _sender(layout, tmp_path, key)
    frame = peer_wire.user_frame(sender.address, "sender", "prompting", "hello")
    pid = sender.pid
    assert verified_sender(layout, peer_wire.parse_frame(frame) or _fail(), pid) is None  # unsigned
    forged = {**frame, peer_wire.SIG_FIELD: other.sign(peer_wire.signed_bytes(frame))}
    assert verified_sender(layout, peer_wire.parse_frame(forged) or _fail(), pid) is None  # another key's
    signed = {**frame, peer_wire.SIG_FIELD: key.sign(peer_wire.signed_bytes(frame))}
    assert verified_sender(layout, peer_wire.parse_frame(signed) or _fail(), pid) is not None
    content = signed["message"]["content"].replace("hello", "rm -rf")
    tampered = {**signed, "message": {**signed["message"], "content": content}}
    assert verified_sender(layout, peer_wire.parse_frame(tampered) or _fail(), pid) is None
    not_its = pid + 1  # not the record's process
    assert verified_sender(layout, peer_wire.parse_frame(signed) or _fail(), not_its) is None


def test_the_key_is_made_at_the_first_message_to_one_of_ours_and_recorded_first(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "claude")
    endpoint = _endpoint(layout, tmp_path)
    endpoint.record = peer_records.new_record("me", str(tmp_path), "me", "/tmp/peer-me.sock", "interactive", "cli",
                                              None)  # fmt: skip
    peer_records.write_record(layout, endpoint.record)
    assert endpoint.record.public_key is None and endpoint._key is None  # nothing made at start
    key = endpoint._signing_key()
    assert key is not None and endpoint._signing_key() is key
    [mine] = [r for r in peer_records.live_records(layout) if r.session_id == "me"]
    assert mine.public_key == key.public


def _fail() -> peer_wire.Frame:
    raise AssertionError("the frame did not parse")
