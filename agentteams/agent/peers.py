"""A session among the independent sessions on this machine (claude 2.1.332's ListAgents, SendMessage to a session),
and ours on other machines through the Redis store (agent/peer_remote.py): its record and socket, the
`crossSessionInbound` policy, notify_when_idle, sending; frames between two of ours are signed, never run."""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentteams import diagnostics
from agentteams.agent import peer_texts
from agentteams.agent.peer_inbound import HeldMessages, Policy, verdict_for, verified_sender
from agentteams.agent.peer_outbox import Outbox
from agentteams.errors import AgentTeamsError
from agentteams.procs import peer_socket
from agentteams.procs.peer_socket import Inbound, Listener
from agentteams.store import peer_records, peer_wire
from agentteams.store.fs.atomic_json import epoch_ms
from agentteams.store.opener import redis_store_configured
from agentteams.store.paths import Layout
from agentteams.store.peer_records import SessionRecord
from agentteams.store.peer_wire import Frame

if TYPE_CHECKING:  # only with a Redis store: a session without one never loads it
    from agentteams.agent.peer_remote import RemotePeers


@dataclass
class PeerWiring:
    """What the session lends its endpoint: its permission mode and policy read live, where news goes."""

    mode: Callable[[], str]  # the live permission mode
    policy: Callable[[], Policy | None]  # the crossSessionInbound setting, None when unset
    hear: Callable[[str], None]  # text for the model: a new turn when idle, else at its next tool result
    show: Callable[[str], None]  # a line for the person only
    ask_held: Callable[[str, str], bool] | None = None  # a REPL's question about a held message: True delivers it


@dataclass
class _Sent:
    address: str
    name: str
    pid: int = 0  # its process when asked: a session's last frame (it has exited) comes after its record has gone


@dataclass
class PeerEndpoint:
    """One session's record, socket and mail between sessions. `start` publishes it; `close` takes it away."""

    layout: Layout
    session_id: str
    cwd: Path
    name: str
    wiring: PeerWiring
    kind: str = "interactive"
    entrypoint: str = "cli"
    record: SessionRecord | None = None
    remote: RemotePeers | None = None  # with a Redis store: our sessions on other machines
    _token: str = field(default_factory=lambda: secrets.token_hex(16))
    _listener: Listener | None = None
    _key: Any = None  # our SigningKey, made at our first message to one of ours (_signing_key)
    _unsigned: bool = False  # the signing library would not load: our frames go unsigned
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _sent: dict[str, _Sent] = field(default_factory=dict)  # msg_id -> where it went (statuses name it)
    _asked: dict[str, _Sent] = field(default_factory=dict)  # notify_when_idle we sent: msg_id -> whom
    _subscribers: dict[str, str] = field(default_factory=dict)  # notify_when_idle we owe: msg_id -> address
    _held: HeldMessages | None = None  # made at `start`, with the wiring's way to ask
    _busy: bool = False
    _writes: threading.Condition = field(default_factory=threading.Condition)
    _record_lock: threading.Lock = field(default_factory=threading.Lock)  # no write of the record lands after close
    _status: peer_records.Status | None = None
    _notices: Outbox = field(default_factory=Outbox)  # idle notices: sent off the turn's path

    # -- life ----------------------------------------------------------------------------------------

    def start(self) -> None:
        if self.remote is None and redis_store_configured():  # ours on other machines too: loaded only then
            from agentteams.agent.peer_remote import open_remote

            self.remote = open_remote(self.session_id)
        self._held = HeldMessages(self.wiring.ask_held, self._settle_held)
        path = str(peer_socket.socket_path())
        self.record = peer_records.new_record(self.session_id, str(self.cwd), self.name, path, self.kind,
                                              self.entrypoint, None)  # fmt: skip
        self._listener = Listener(Path(path), self._arrived)
        self._listener.start()
        peer_records.write_token(self.layout, self.record, self._token)
        peer_records.write_record(self.layout, self.record)
        threading.Thread(target=self._keep_record, name="peer-record", daemon=True).start()
        if self.remote is not None:
            self.remote.start(self.record.to_json(), self._dispatch)

    def close(self) -> None:
        with self._lock:  # whoever asked to hear of our next idle hears that we exited, as claude tells them
            owed, self._subscribers = self._subscribers, {}
        for msg_id, address in owed.items():
            self._notices.post(partial(self._notify_idle, msg_id, address, "", "exited"), f"tell {address} we exit")
        for frame in self._held.take_all() if self._held is not None else []:
            self._status_to(frame, "expired", reason="The receiving session ended before its user let the message in.")
        self._notices.close()  # the notices owed go out first: they name this session's address, going with it
        if self._listener is not None:
            self._listener.close()
        if self.remote is not None:
            self.remote.close()
        with self._record_lock:  # after a write in flight (its file would outlive the removal); none starts now
            record, self.record = self.record, None
        with self._writes:  # the record's writer sees it gone and ends
            self._status = None
            self._writes.notify_all()
        if record is not None:
            peer_records.remove_record(self.layout, record)

    def _keep_record(self) -> None:
        """Status changes are written here, never on a turn's path (each write is fsync'd)."""
        while True:
            with self._writes:
                while self._status is None and self.record is not None:
                    self._writes.wait()
                status, self._status = self._status, None
            if self.record is None:
                return
            self._write(status)

    def _write(self, status: peer_records.Status | None) -> None:
        with self._record_lock:
            record = self.record
            if record is None:
                return
            if self._key is not None:
                record.raw[peer_records.KEY_FIELD] = self._key.public
            try:
                peer_records.write_record(self.layout, record, status)
            except (OSError, AgentTeamsError) as e:
                diagnostics.warning("could not update this session's record: %s", e)
        if self.remote is not None:
            self.remote.publish(record.to_json())

    # -- turns ---------------------------------------------------------------------------------------

    def busy(self) -> None:
        self._busy = True
        with self._writes:
            self._status = "busy"
            self._writes.notify_all()

    def idle(self, last_text: str) -> None:
        """The session finished a turn with nothing queued: its record says so, and whoever asked is told once."""
        with self._writes:
            self._status = "idle"
            self._writes.notify_all()
        with self._lock:  # with _subscribe's check: one that saw the turn still busy is in `owed`
            self._busy = False
            owed, self._subscribers = self._subscribers, {}
        for msg_id, address in owed.items():  # each may wait for a receiver that does not answer: never the turn
            self._notices.post(partial(self._notify_idle, msg_id, address, last_text), f"tell {address} it is idle")

    def _notify_idle(self, msg_id: str, address: str, last_text: str, state: str = "idle") -> None:
        fields = {"detail": last_text[:300]} if state == "idle" else {}  # claude's exit notice has none
        frame = peer_wire.control_frame("peer_idle_notice", self._me(address), orig_msg_id=msg_id, state=state,
                                        finished_at=epoch_ms(), **fields, from_mode=self._mode())  # fmt: skip
        try:
            self._post(address, frame)
        except (AgentTeamsError, LookupError) as e:
            diagnostics.warning("could not tell %s this session is idle: %s", address, e)

    # -- sending -------------------------------------------------------------------------------------

    def _me(self, to: str) -> str:
        """This session's address as the session at `to` reaches it: its socket, or through the Redis store."""
        if to.startswith(peer_records.REMOTE_SCHEME) and self.remote is not None:
            return self.remote.address
        return self.record.address if self.record is not None else ""

    def _mode(self) -> peer_wire.Mode:
        return peer_wire.mode_class(self.wiring.mode())

    def peers(self) -> list[SessionRecord]:
        """The other live sessions: this machine's, then ours elsewhere that the Redis store lists (one of this
        machine's that also publishes there is reached through its socket)."""
        me = self.record.pid if self.record is not None else -1
        local = [r for r in peer_records.live_records(self.layout) if r.pid != me]
        if self.remote is None:
            return local
        try:
            remote = self.remote.records()
        except AgentTeamsError as e:
            diagnostics.warning("sessions on other machines are not listed: %s", e)
            return local
        seen = {r.session_id for r in local} | {self.session_id}
        return local + [r for r in remote if r.session_id not in seen]

    def listing(self, teammates: list[str]) -> str:
        if self.record is None:
            return "This session takes no part in messages between sessions."
        return peer_texts.listing(self.record, self.peers(), teammates)

    def find(self, to: str) -> SessionRecord | None:
        """The live session `to` names: its address (`uds:…`), `name [ref]`, or a name only one session has.
        LookupError when a name is shared (the model is told to add the ref)."""
        everyone = self.peers()
        if to.startswith(peer_wire.SCHEMES):
            return next((r for r in everyone if r.address == to), None)
        name, _, rest = to.partition(" [")
        if rest.endswith("]"):
            return next((r for r in everyone if r.name == name and peer_texts.ref(r) == rest[:-1]), None)
        named = [r for r in everyone if r.name == to]
        if len(named) > 1:
            refs = ", ".join(f"{to} [{peer_texts.ref(r)}]" for r in named)
            raise LookupError(f"{len(named)} sessions are named {to!r}: send to one of {refs}")
        return named[0] if named else None

    def knows(self, to: str) -> bool:
        try:
            return self.find(to) is not None
        except LookupError:
            return True

    def send(self, to: str, body: str, summary: str | None, notify: bool) -> tuple[dict[str, Any], bool]:
        """SendMessage to a session: the tool's result (claude's shape: success, message, msg_id) and whether it
        is an error."""
        if self.record is None:
            return {"success": False, "message": "This session takes no part in messages between sessions."}, True
        try:
            target = self.find(to)
        except LookupError as e:
            return {"success": False, "message": str(e)}, True
        if target is None:
            where = "on this machine" + (" or in the shared store" if self.remote else "")
            return {"success": False, "message": f"No session named {to!r} is running {where} "
                                                 "(ListAgents lists those that are)."}, True  # fmt: skip
        if not body and not notify:
            return {"success": False, "message": "Nothing to send: give a message, or notify_when_idle."}, True
        frame: dict[str, Any] | None = None
        try:
            if body:
                frame = peer_wire.user_frame(self._me(target.address), self.name, self._mode(), body)
                with self._lock:  # before it leaves: the receiver's "held" or "refused" may come back at once
                    self._sent[frame["msg_id"]] = _Sent(target.address, target.name)
                self._post(target.address, frame, target)
            if notify:
                ask = peer_wire.control_frame("notify_when_idle", self._me(target.address), from_mode=self._mode())
                with self._lock:
                    self._asked[ask["msg_id"]] = _Sent(target.address, target.name, target.pid)
                self._post(target.address, ask, target)
        except (AgentTeamsError, LookupError) as e:
            return {"success": False, "message": f"Failed to send to {target.name}: {e}"}, True
        said = peer_texts.sent(target.name, summary, body, notify, target.host)
        out: dict[str, Any] = {"success": True, "message": said}
        if frame is not None:
            out["msg_id"] = frame["msg_id"]
        return out, False

    def _post(self, address: str, frame: dict[str, Any], target: SessionRecord | None = None) -> None:
        """One frame to the session at `address`; signed when that session is one of ours."""
        if target is None and self.remote is not None and address.startswith(peer_records.REMOTE_SCHEME):
            target = self.remote.find(address)
        elif target is None:
            target = next((r for r in peer_records.live_records(self.layout) if r.address == address), None)
        if target is None:
            raise LookupError(f"{address} is not a running session")
        if target.host:  # on another machine: through the Redis store, always signed
            key = self._signing_key()
            if key is None or self.remote is None:
                raise LookupError(f"{target.name} is on another machine, and this session cannot sign messages")
            self.remote.post(target, frame, key)
            return
        token = peer_records.read_token(self.layout, target)
        if token is None:
            raise LookupError(f"{target.name} has no messaging key")
        if peer_records.OURS_FIELD in target.raw or target.public_key:  # one of ours: signed
            key = self._signing_key()
            if key is not None:
                frame[peer_wire.SIG_FIELD] = key.sign(peer_wire.signed_bytes(frame))
        peer_socket.deliver(target.socket_path, peer_wire.encode(token, frame))

    def _signing_key(self) -> Any:
        """Our key, made at this session's first message to one of ours (the signing library stays off every start:
        most sessions never send one) and put in our record before that message leaves, for its receiver to check."""
        with self._lock:
            if self._key is None and not self._unsigned:
                from agentteams.store.signing import SigningKey

                try:
                    self._key = SigningKey.generate()
                except Exception as e:  # no signing library: our frames go unsigned, as claude's
                    self._unsigned = True
                    diagnostics.warning("messages to other sessions go unsigned: %s", e)
                    return None
                self._write(None)
            return self._key

    # -- receiving -----------------------------------------------------------------------------------

    def _arrived(self, inbound: Inbound) -> None:
        decoded = peer_wire.decode(inbound.data)
        if decoded is None or not hmac.compare_digest(decoded[0].encode(), self._token.encode()):
            return  # not our token: dropped unread, as claude drops it
        frame = peer_wire.parse_frame(decoded[1])
        if frame is None:  # its sender was told it was taken (the close): the line is all that is left of it
            lost, what = peer_wire.unread(decoded[1])
            (diagnostics.warning if lost else diagnostics.debug)("dropped %s from another session", what)
            return
        sender = verified_sender(self.layout, frame, inbound.pid)
        if sender is None and self._exit_notice(frame, inbound.pid):
            return
        if sender is None:
            diagnostics.warning("dropped a message claiming to come from %s: not that session's process",
                                frame.sender)  # fmt: skip
            return
        self._dispatch(frame, sender)

    def _dispatch(self, frame: Frame, sender: SessionRecord) -> None:
        """A frame whose sender is vouched for (its socket's process, or its signature through the store)."""
        if frame.kind == "user":
            self._message(frame, sender)
        elif frame.kind == "notify_when_idle":
            self._subscribe(frame)
        elif frame.kind == "peer_idle_notice":
            with self._lock:
                asked = self._asked.pop(frame.orig_msg_id, None)
            if asked is not None and asked.address == frame.sender:
                self.wiring.hear(peer_texts.idle_notice(asked.name, frame))
        else:
            with self._lock:
                sent = self._sent.get(frame.orig_msg_id)
            if sent is not None and sent.address == frame.sender:
                self.wiring.hear(peer_texts.status_notice(frame, sent.name))

    def _exit_notice(self, frame: Frame, pid: int) -> bool:
        """The notice of a session we asked about that has exited: its record is gone (claude takes it away first),
        so its process is the one we sent the request to, by the kernel's pid."""
        if frame.kind != "peer_idle_notice" or frame.status != "exited":
            return False
        with self._lock:
            asked = self._asked.get(frame.orig_msg_id)
            if asked is None or asked.address != frame.sender or asked.pid != pid:
                return False
            del self._asked[frame.orig_msg_id]
        self.wiring.hear(peer_texts.idle_notice(asked.name, frame))
        return True

    def _message(self, frame: Frame, sender: SessionRecord) -> None:
        verdict, why = verdict_for(self.wiring.policy(), frame, self._mode())
        where = f" on {sender.host}" if sender.host else ""
        if verdict == "refuse":
            self._status_to(frame, "expired", status_detail="refused", reason="The receiving session does not take "
                            "messages from other sessions; your message was not given to its model.")  # fmt: skip
            self.wiring.show(f"Refused a message from {sender.name}{where} ({frame.sender}): {why}.")
            return
        if verdict == "hold":
            assert self._held is not None  # made at start, before any frame can come
            # claude asks the person only about a message held for its sender's other permission-mode class; one held
            # by the setting waits (here: until the session ends, when its sender hears it expired)
            asked = self.wiring.policy() is None
            self._held.hold(frame, sender, peer_texts.held_question(frame, sender.name, why) if asked else None)
            self._status_to(frame, "held", reason="Your message waits for the receiving user's approval before "
                            "it reaches their session's model.")  # fmt: skip
            self.wiring.show(peer_texts.held_line(frame, why))
            return
        self._busy = True  # it starts a turn: a notify_when_idle right behind it waits for that turn's end
        self.wiring.hear(peer_texts.inbound(frame, sender.name, sender.host))

    def _subscribe(self, frame: Frame) -> None:
        if self.wiring.policy() == "refuse":
            return
        with self._lock:  # checked and added at once: an `idle` between the two would never tell it
            if self._busy:
                self._subscribers[frame.msg_id] = frame.sender
                return
        told = partial(self._notify_idle, frame.msg_id, frame.sender, "")  # idle already: told now, off this thread
        self._notices.post(told, f"tell {frame.sender} it is idle")

    def _status_to(self, frame: Frame, status: str, **fields: str) -> None:
        reply = peer_wire.control_frame("peer_message_status", self._me(frame.sender), status=status, **fields,
                                        orig_msg_id=frame.msg_id)  # fmt: skip
        try:
            self._post(frame.sender, reply)
        except (AgentTeamsError, LookupError) as e:
            diagnostics.warning("could not tell %s what became of its message: %s", frame.sender, e)

    def held(self) -> list[Frame]:
        return self._held.frames() if self._held is not None else []

    def _settle_held(self, frame: Frame, sender: SessionRecord, deliver: bool) -> None:
        if not deliver:
            self._status_to(frame, "denied", reason="The receiving session's user declined your message.")
            return
        self._status_to(frame, "delivered", reason="The receiving session's user let your message in.")
        self._busy = True
        self.wiring.hear(peer_texts.inbound(frame, sender.name, sender.host))
