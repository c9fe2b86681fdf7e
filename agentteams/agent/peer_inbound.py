"""The inbound policy for messages from other sessions (`crossSessionInbound`), and the messages it holds: put to the
person where a REPL can ask (deny, the default, or deliver, as claude's dialog offers), else expired at the end."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from agentteams import diagnostics
from agentteams.store import peer_records, peer_wire
from agentteams.store.paths import Layout
from agentteams.store.peer_records import SessionRecord
from agentteams.store.peer_wire import Frame

Policy = Literal["accept", "hold", "refuse"]
POLICIES: tuple[Policy, ...] = ("accept", "hold", "refuse")
SETTING = "crossSessionInbound"


def policy_setting(value: object) -> Policy | None:
    """The setting's policy; None when it is not set. An unknown value holds, as claude holds while one is present."""
    if value is None:
        return None
    if value in POLICIES:
        return "accept" if value == "accept" else "hold" if value == "hold" else "refuse"
    diagnostics.warning('%s: unknown value %r, messages from other sessions are held (use "accept", "hold" or '
                        '"refuse")', SETTING, value)  # fmt: skip
    return "hold"


def verdict_for(setting: Policy | None, frame: Frame, mode: peer_wire.Mode) -> tuple[Policy, str]:
    """What the policy does with a message, and why (for the lines and the question): claude's rules."""
    if setting in ("hold", "refuse"):
        return setting, f'this session\'s {SETTING} setting is "{setting}"'
    if setting is None and frame.claimed.get("from-mode") != mode:
        return "hold", "the sending session runs in another permission-mode class"
    return "accept", ""


def verified_sender(layout: Layout, frame: Frame, pid: int) -> SessionRecord | None:
    """The sender's record, if the process that connected is the one its `from` names (the kernel's pid), and its
    signature holds when it is one of ours."""
    record = next((r for r in peer_records.live_records(layout) if r.address == frame.sender), None)
    if record is None or record.pid != pid:
        return None
    if record.public_key:
        from agentteams.store.signing import VerifyKey

        key = VerifyKey.parse(record.public_key)
        signature = frame.raw.get(peer_wire.SIG_FIELD)
        if key is None or not key.verify(peer_wire.signed_bytes(frame.raw), signature):
            return None
    return record


# (frame, its verified sender, deliver?) -> the sender told, and the model given it when delivered
Settle = Callable[[Frame, SessionRecord, bool], None]


@dataclass
class HeldMessages:
    """`ask` puts a question (its text, then the message) to the person and returns True for "deliver"; None where
    nobody can be asked (a -p or SDK session): such a message waits until the session ends, then it expires."""

    ask: Callable[[str, str], bool] | None
    settle: Settle
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _held: list[tuple[Frame, SessionRecord]] = field(default_factory=list)

    def hold(self, frame: Frame, sender: SessionRecord, question: tuple[str, str] | None) -> None:
        """Keep it; `question` (its text, the message) is put to the person, where one can be asked."""
        with self._lock:
            self._held.append((frame, sender))
        if self.ask is not None and question is not None:  # the person may take minutes: not on the socket's thread
            threading.Thread(target=self._put, args=(frame, question), name="peer-held", daemon=True).start()

    def _put(self, frame: Frame, question: tuple[str, str]) -> None:
        assert self.ask is not None
        deliver = self.ask(*question)
        taken = self._take(frame)
        if taken is not None:
            self.settle(frame, taken, deliver)

    def _take(self, frame: Frame) -> SessionRecord | None:
        with self._lock:
            for i, (held, sender) in enumerate(self._held):
                if held is frame:
                    del self._held[i]
                    return sender
        return None

    def frames(self) -> list[Frame]:
        with self._lock:
            return [frame for frame, _sender in self._held]

    def take_all(self) -> list[Frame]:
        """Every message still held, taken (the session ends: each sender hears it expired)."""
        with self._lock:
            taken, self._held = self._held, []
        return [frame for frame, _sender in taken]
