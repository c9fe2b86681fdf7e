"""A session's place among our sessions on other machines, through the Redis store when one is configured: its
record published there with a lease renewed while it runs (a dead session's is gone when the lease ends), an inbox it
listens on, every frame signed and addressed to its receiver, and each one's taking told to its sender."""

from __future__ import annotations

import os
import socket
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.store import peer_records, peer_wire
from agentteams.store.peer_records import SessionRecord
from agentteams.store.peer_wire import Frame
from agentteams.store.redis.peers import ACK_PREFIX, RedisPeers, ack_key
from agentteams.store.signing import SigningKey, VerifyKey

HOST_VAR = "AGENTTEAMS_HOST"  # the name other machines' sessions see this one's under (default: the host name)
LEASE_MS = 10_000  # a record not renewed for this long is a dead session's: gone from the store
RENEW_EVERY = 3.0  # seconds between renewals: a lease outlives two missed ones
SEND_TIMEOUT = 5.0  # a receiver that has not taken the message by then did not take it (the socket's limit too)
CLOSE_WAIT = 2.0  # seconds a closing session waits for its record's removal
SEEN_KEPT = 1000  # message ids remembered: a frame queued again is not handled twice


class RemotePeerError(AgentTeamsError):
    """A message that could not be handed to a session on another machine."""


def host_name() -> str:
    return os.environ.get(HOST_VAR, "").strip() or socket.gethostname()


def open_remote(session_id: str) -> RemotePeers | None:
    """This session's place in the Redis store AGENTTEAMS_STORE names, on a connection pool of its own (its blocking
    reads never hold up the team's); None, said in one line, when the store cannot be reached: this machine's
    sessions still can."""
    from agentteams.store.opener import ENV_STORE
    from agentteams.store.redis.connection import connect, parse_url

    try:
        client = connect(parse_url(os.environ.get(ENV_STORE, "")))
    except AgentTeamsError as e:
        diagnostics.warning("sessions on other machines cannot reach this one: %s", e)
        return None
    return RemotePeers(RedisPeers(client), session_id, host_name())


class RemotePeers:
    """Publishes one session and hands what arrives for it to `arrived` (frame, the sender's record), on threads
    of its own; `post` sends one frame to a session on another machine and waits until it is taken."""

    def __init__(self, redis: RedisPeers, session_id: str, host: str) -> None:
        self.redis, self.session_id, self.host = redis, session_id, host
        self._record: dict[str, Any] | None = None
        self._arrived: Callable[[Frame, SessionRecord], None] | None = None
        self._stop = threading.Event()
        self._writing = threading.Lock()  # a renewal never lands after the removal at close (no record outlives it)
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._failing = False

    @property
    def address(self) -> str:
        return f"{peer_records.REMOTE_SCHEME}{self.session_id}"

    def start(self, record: dict[str, Any], arrived: Callable[[Frame, SessionRecord], None]) -> None:
        self._arrived = arrived
        self.publish(record)
        threading.Thread(target=self._renew, name="peer-lease", daemon=True).start()
        threading.Thread(target=self._listen, name="peer-inbox", daemon=True).start()

    def publish(self, record: dict[str, Any]) -> None:
        """This session's record as it stands now (status, key), under a new lease; renewed from here on."""
        self._record = {**record, peer_records.HOST_FIELD: self.host}
        self._renew_once()

    def close(self) -> None:
        """Take the record away, waiting at most CLOSE_WAIT: a store that is away (its commands wait for it to come
        back) must not hold up the session's exit; the lease ends the record then."""
        self._stop.set()
        remover = threading.Thread(target=self._remove, name="peer-remove", daemon=True)
        remover.start()
        remover.join(CLOSE_WAIT)

    def _remove(self) -> None:
        with self._writing:  # after a renewal in flight; none starts once stopped
            try:
                self.redis.remove(self.session_id)
            except AgentTeamsError as e:
                diagnostics.debug("this session's record stays in the store until its lease ends: %s", e)

    def _renew(self) -> None:
        while not self._stop.wait(RENEW_EVERY):
            self._renew_once()

    def _renew_once(self) -> None:
        with self._writing:
            if self._record is None or self._stop.is_set():
                return
            try:
                self.redis.publish(self.session_id, self._record, LEASE_MS)
                self._failing = False
            except AgentTeamsError as e:
                self._said_once("sessions on other machines cannot see this one now", e)

    def _said_once(self, what: str, error: Exception) -> None:
        if not self._failing:
            diagnostics.warning("%s: %s", what, error)
        self._failing = True

    # -- finding and sending ---------------------------------------------------------------------------

    def records(self) -> list[SessionRecord]:
        """The other sessions of ours in the store whose lease runs."""
        found = (peer_records.remote_record(obj) for obj in self.redis.live())
        return [r for r in found if r is not None and r.session_id != self.session_id]

    def find(self, address: str) -> SessionRecord | None:
        if not address.startswith(peer_records.REMOTE_SCHEME):
            return None
        obj = self.redis.read(address.removeprefix(peer_records.REMOTE_SCHEME))
        return peer_records.remote_record(obj) if obj is not None else None

    def post(self, target: SessionRecord, frame: dict[str, Any], key: SigningKey) -> None:
        """Addressed to `target` and signed (the address under the signature: it cannot be sent on to another), then
        queued in its inbox; RemotePeerError unless it is taken within SEND_TIMEOUT."""
        frame[peer_wire.TO_FIELD] = target.address
        frame[peer_wire.SIG_FIELD] = key.sign(peer_wire.signed_bytes(frame))
        ack = ack_key(frame["msg_id"])
        if not self.redis.push(target.session_id, {"frame": frame, "ack": ack}):
            raise RemotePeerError(f"{target.name} on {target.host} is not running any more")
        if not self.redis.await_taken(ack, SEND_TIMEOUT):
            raise RemotePeerError(f"{target.name} on {target.host} did not take the message within {SEND_TIMEOUT:g}s")

    # -- receiving -------------------------------------------------------------------------------------

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                entries = self.redis.take(self.session_id, 1.0)
            except AgentTeamsError as e:
                self._said_once("messages from sessions on other machines wait", e)
                self._stop.wait(1.0)
                continue
            for entry in entries:
                self._entry(entry)

    def _entry(self, entry: dict[str, Any]) -> None:
        obj, ack = entry.get("frame"), entry.get("ack")
        try:
            self._handle(obj)
        except Exception as e:  # one bad frame must not end the listener
            diagnostics.warning("a message from another session was dropped: %s: %s", type(e).__name__, e)
        if isinstance(ack, str) and ack.startswith(ACK_PREFIX):  # only a taking list: never another key
            try:
                self.redis.taken(ack)
            except AgentTeamsError as e:
                diagnostics.debug("could not tell a sender its message was taken: %s", e)

    def _handle(self, obj: object) -> None:
        frame = peer_wire.parse_frame(obj)
        if frame is None:  # taken all the same (its sender stops waiting): the line is all that is left of it
            lost, what = peer_wire.unread(obj)
            (diagnostics.warning if lost else diagnostics.debug)("dropped %s from another machine", what)
            return
        if self._arrived is None or not frame.sender.startswith(peer_records.REMOTE_SCHEME):
            return
        sender = self._verified(frame)
        if sender is None:
            diagnostics.warning("dropped a message claiming to come from %s: its signature does not hold",
                                frame.sender)  # fmt: skip
            return
        if frame.msg_id in self._seen:
            return
        self._seen[frame.msg_id] = None
        if len(self._seen) > SEEN_KEPT:
            self._seen.popitem(last=False)
        self._arrived(frame, sender)

    def _verified(self, frame: Frame) -> SessionRecord | None:
        """The sender's record, if the frame is addressed to this session and signed with the key in that record
        (through the store, a signature is all that vouches for a sender: every frame must carry one)."""
        if frame.raw.get(peer_wire.TO_FIELD) != self.address:
            return None
        record = self.find(frame.sender)
        key = VerifyKey.parse(record.public_key) if record is not None and record.public_key else None
        if key is None or not key.verify(peer_wire.signed_bytes(frame.raw), frame.raw.get(peer_wire.SIG_FIELD)):
            return None
        return record
