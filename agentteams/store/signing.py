"""Ed25519 signatures on inbox envelopes: Claude Code's `lead_sig` (2.1.330) and our per-member `agentteams_sig`.

The only importer of `cryptography` (imported on first use, off the spawn and wake paths); private keys
never leave this process's memory: only public keys are written (argv, member entries).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agentteams.store.fs.atomic_json import epoch_ms

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    from agentteams.store.records import Envelope

LEAD_SIG = "lead_sig"  # Claude Code's envelope key, the last one it writes
MEMBER_SIG = "agentteams_sig"  # ours: a key real `claude` readers keep and ignore
MEMBER_KEY = "agentteamsKey"  # ours, in a member entry: the public key its envelopes verify against
PROTECTED_SENDERS = frozenset({"team-lead", "user", "system"})  # the names only a lead may write as
SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")  # DER SubjectPublicKeyInfo header of an Ed25519 key
_VERIFY_KEY_ARG = re.compile(r"^(\d+)\.([A-Za-z0-9_-]+)$")  # `--lead-verify-key <ms>.<b64url SPKI>`
_SURROGATE = re.compile("[\ud800-\udfff]")
Domain = Literal["claude-team-lead-entry-v1", "agentteams-member-entry-v1"]
LEAD_DOMAIN: Domain = "claude-team-lead-entry-v1"
HELD_WAIT = 30.0  # seconds a lead's message waits for its held recipient's restart with a new key (`Keyring.hold`)
HELD_POLL = 0.1  # how often that wait asks whether the recipient has paused
MEMBER_DOMAIN: Domain = "agentteams-member-entry-v1"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def signed_bytes(domain: Domain, env: Envelope) -> bytes:
    """The bytes a signature covers: `JSON.stringify([domain, msg_id, from, timestamp, text, summary, color,
    from_plugin])`, each field as written and an absent one null (`msgV`, `type`, `read` are not covered)."""
    plugin = getattr(env, "from_plugin", None) or env.extra.get("from_plugin")
    fields = [domain, env.msg_id, env.sender, env.timestamp, env.text, env.summary, env.color, plugin]
    text = json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
    if text.isascii():
        return text.encode("ascii")
    # JSON.stringify escapes a lone surrogate; Python would write it raw (and UTF-8 cannot encode it)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def _ed25519() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ed25519

    return ed25519


def warm_up() -> None:
    """Import the library now (~20 ms), on a thread of the caller's choosing, so no spawn or wake pays for it; and
    use it once: its first key initialises OpenSSL (~1 ms), which a fork server's children then inherit done."""
    key = _ed25519().Ed25519PrivateKey.generate()
    import cryptography.exceptions  # noqa: F401

    key.public_key().verify(key.sign(b"warm-up"), b"warm-up")


def warm_up_soon() -> None:
    """`warm_up` on a thread of its own, beside the caller's set-up. Not a daemon thread: a process ending while a
    daemon thread is inside the library's (Rust) import is killed by glibc ("FATAL: exception not rethrown")."""
    import sys
    import threading

    if "cryptography.exceptions" in sys.modules:  # imported already (a fork server's child): no thread to start
        return
    threading.Thread(target=warm_up, name="signing-import").start()


class SigningKey:
    """A private Ed25519 key held in memory only."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public_raw = key.public_key().public_bytes_raw()
        self.public = b64url(SPKI_PREFIX + self.public_raw)  # SPKI DER, base64url

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(_ed25519().Ed25519PrivateKey.generate())

    def sign(self, data: bytes) -> str:
        return b64url(self._key.sign(data))

    def __repr__(self) -> str:
        return f"SigningKey(public={self.public!r})"  # never the private half


@dataclass(frozen=True)
class VerifyKey:
    """A public key, from `--lead-verify-key` or a member entry (the library loads it on its first check)."""

    public: str
    raw: bytes = field(repr=False)
    _loaded: list[Ed25519PublicKey] = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def parse(cls, text: str) -> VerifyKey | None:
        """The key in a base64url SPKI string; None when it is not an Ed25519 key."""
        der = _unb64url(text)
        if der is None or len(der) != len(SPKI_PREFIX) + 32 or not der.startswith(SPKI_PREFIX):
            return None
        return cls(text, der[len(SPKI_PREFIX) :])

    def verify(self, data: bytes, signature: object) -> bool:
        if not isinstance(signature, str):
            return False
        raw = _unb64url(signature)
        if raw is None or len(raw) != 64:
            return False
        from cryptography.exceptions import InvalidSignature

        if not self._loaded:
            self._loaded.append(_ed25519().Ed25519PublicKey.from_public_bytes(self.raw))
        try:
            self._loaded[0].verify(raw, data)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True)
class LeadVerifyKey:
    """`--lead-verify-key <ms>.<key>`: the lead's key for this teammate and when the lead made the command line."""

    issued_ms: int
    key: VerifyKey

    @classmethod
    def parse(cls, value: str) -> LeadVerifyKey | None:
        """None for anything but `<decimal ms>.<Ed25519 SPKI, base64url>` (then no lead message verifies)."""
        m = _VERIFY_KEY_ARG.match(value.strip())
        key = VerifyKey.parse(m.group(2)) if m else None
        return cls(int(m.group(1)), key) if m and key else None

    def argument(self) -> str:
        return f"{self.issued_ms}.{self.key.public}"


def verifies(domain: Domain, env: Envelope, key: VerifyKey) -> bool:
    field = LEAD_SIG if domain == LEAD_DOMAIN else MEMBER_SIG
    return key.verify(signed_bytes(domain, env), env.extra.get(field))


class Keyring:
    """The keys this process signs with: one per member it runs (its voice) and, as a lead, one per teammate
    it started (Claude Code's `lead_sig`, verified with the key on that teammate's command line)."""

    def __init__(self) -> None:
        self._members: dict[tuple[str, str], SigningKey | None] = {}  # (team, member) -> its key, once made
        self._leads: dict[tuple[str, str], SigningKey] = {}  # (team, recipient lowercased) -> lead key
        self._records: dict[tuple[str, str], _Record] = {}  # (team, member) -> how its public key is recorded
        self._held: dict[tuple[str, str], Callable[[], None]] = {}  # (team, recipient) -> what restarts it soonest
        self._lock = threading.Lock()
        self._rekeyed = threading.Condition(self._lock)

    def adopt(self, team: str, name: str, record: Callable[[str], None] | None = None) -> None:
        """From now on every envelope `name` writes is signed (its key is made when first needed): cheap, so a
        runtime calls it before its first send. `record(public)` puts the public key where readers look: run
        once, by `recorded` off the start-up path, or else before the first envelope it signs leaves (a reader
        judging that envelope against an older key would take it for forged)."""
        with self._lock:
            self._members.setdefault((team, name), None)
            if record is not None:
                self._records[(team, name)] = _Record(record)

    def recorded(self, team: str, name: str) -> bool:
        """Record `name`'s public key now unless it was; True when this call wrote it (waits for a write under
        way elsewhere)."""
        with self._lock:
            once = self._records.get((team, name))
            key = self._member_key(team, name) if once is not None else None
        return once.run(key.public) if once is not None and key is not None else False

    def member_key(self, team: str, name: str) -> SigningKey:
        """This process's key for `name` (made on first use): record its `public` in the member entry."""
        with self._lock:
            return self._member_key(team, name)

    def _member_key(self, team: str, name: str) -> SigningKey:
        key = self._members.get((team, name))
        if key is None:
            key = self._members[(team, name)] = SigningKey.generate()
        return key

    def new_lead_key(self, team: str, recipient: str) -> LeadVerifyKey:
        """A fresh lead key for a teammate being started; the result goes on its command line."""
        key = SigningKey.generate()
        with self._lock:
            self._leads[(team, recipient.lower())] = key
            self._held.pop((team, recipient.lower()), None)
            self._rekeyed.notify_all()
        return LeadVerifyKey(epoch_ms(), VerifyKey(key.public, key.public_raw))

    def hold(self, team: str, recipient: str, pump: Callable[[], None]) -> None:
        """`recipient` runs with a key this process never held (a resumed lead's adopted teammate) and is restarted
        with a new one at its next pause: what the lead writes to it waits for that (`pump` restarts it now if it
        has paused), since the old process would judge it forged and drop it."""
        with self._lock:
            self._held[(team, recipient.lower())] = pump

    def release(self, team: str, recipient: str) -> None:
        """No new key is coming for `recipient` (it is gone, or its restart failed): writes to it go as they are."""
        with self._lock:
            self._held.pop((team, recipient.lower()), None)
            self._rekeyed.notify_all()

    def _await_new_key(self, team: str, recipient: str) -> None:
        """Until a held recipient has its new key, or HELD_WAIT seconds (then the message goes unsigned)."""
        deadline = time.monotonic() + HELD_WAIT
        while (pump := self._held.get((team, recipient.lower()))) is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self._lock.release()  # the pump takes locks of its own (the restart spawns, the spawner records keys)
            try:
                pump()
            finally:
                self._lock.acquire()
            if (team, recipient.lower()) in self._held:
                self._rekeyed.wait(min(left, HELD_POLL))

    def drop_lead_key(self, team: str, recipient: str) -> None:
        with self._lock:
            self._leads.pop((team, recipient.lower()), None)

    def seal(self, team: str, recipient: str, env: Envelope) -> None:
        """Sign an envelope about to be written: `lead_sig` (the last key, as Claude Code writes it) when a lead
        writes to a teammate it holds a key for, else the sender's own signature if this process speaks for it."""
        with self._lock:
            if env.sender in PROTECTED_SENDERS and (team, recipient.lower()) in self._held:
                self._await_new_key(team, recipient)
            mine = self._member_key(team, env.sender) if (team, env.sender) in self._members else None
            lead = self._leads.get((team, recipient.lower())) if env.sender in PROTECTED_SENDERS else None
        if lead is None and mine is not None:
            self.recorded(team, env.sender)  # its key readable before anything signed with it is
        if lead is not None:  # the teammate checks this one: the member signature would only cost time
            env.extra[LEAD_SIG] = lead.sign(signed_bytes(LEAD_DOMAIN, env))
        elif mine is not None:
            env.extra[MEMBER_SIG] = mine.sign(signed_bytes(MEMBER_DOMAIN, env))


class _Record:
    """A member key's one recording: the first caller writes, a concurrent one waits for that write."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._lock = threading.Lock()
        self._done = False

    def run(self, public: str) -> bool:
        with self._lock:
            if self._done:
                return False
            self._done = True  # once, even if it fails: the writer says so; a retry per send would stall each
            self._write(public)
            return True
