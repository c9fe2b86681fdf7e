"""claude 2.1.332's cross-session frames: a connection carries an auth line (the receiver's token) and one JSON frame,
the receiver's close its only answer; a user message (in `<cross-session-message>`), or a control: notify_when_idle,
peer_idle_notice, peer_message_status (held, denied, delivered, expired/refused)."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

MSGV = 1
SIG_FIELD = "agentteams_sig"  # ours only: a frame between two of our sessions is signed (claude ignores the key)
SIG_DOMAIN = "agentteams-peer-frame-v1"
TO_FIELD = "agentteams_to"  # ours only, in a frame through the Redis store: its receiver's address, under the signature
SCHEMES = ("uds:", "redis:")  # a socket's sender; a sender of ours through the Redis store (`redis:<session id>`)
MAX_LINE = 1 << 20  # a frame longer than this is not read (claude's messages are plain text, a few kB)
Mode = Literal["bypass", "prompting"]  # a sender's permission mode class, as claude attests it
FrameKind = Literal["user", "notify_when_idle", "peer_idle_notice", "peer_message_status"]
CONTROLS = ("notify_when_idle", "peer_idle_notice", "peer_message_status")
TAG, CLOSE = "cross-session-message", "</cross-session-message>"
_WRAPPED = re.compile(
    r"\A<cross-session-message((?:\s+[\w-]+=\"[^\"]*\")*)\s*>\n?(.*?)\n?</cross-session-message>\s*\Z", re.S
)
_ATTR = re.compile(r'([\w-]+)="([^"]*)"')


def mode_class(permission_mode: str) -> Mode:
    """claude puts bypassPermissions in a class of its own; every mode that can ask is `prompting`."""
    return "bypass" if permission_mode == "bypassPermissions" else "prompting"


def new_id() -> str:
    return str(uuid.uuid4())


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("\n", " ").replace("<", "&lt;")


def _unattr(value: str) -> str:
    return value.replace("&quot;", '"').replace("&lt;", "<").replace("&amp;", "&")


def wrap(sender: str, name: str, mode: Mode, body: str) -> str:
    """A message's content as claude's senders write it."""
    return f'<{TAG} from="{_attr(sender)}" from-name="{_attr(name)}" from-mode="{mode}">\n{body}\n{CLOSE}'


def unwrap(content: str) -> tuple[dict[str, str], str] | None:
    """The wrapper's attributes and the body inside; None for content that is not one wrapped message."""
    m = _WRAPPED.match(content)
    if m is None:
        return None
    return {k: _unattr(v) for k, v in _ATTR.findall(m.group(1))}, m.group(2)


@dataclass(frozen=True)
class Frame:
    """One frame as read. `sender` is its `from` (`uds:<socket path>`); what the wrapper claims is in `claimed`."""

    kind: FrameKind
    msg_id: str
    sender: str
    body: str = ""
    claimed: dict[str, str] = field(default_factory=dict)  # a message's wrapper attributes (from-name, from-mode)
    mode: str = ""  # a control's from_mode
    orig_msg_id: str = ""
    status: str = ""
    detail: str = ""
    reason: str = ""
    finished_at: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def sender_name(self) -> str:
        return self.claimed.get("from-name", "")


def user_frame(sender: str, name: str, mode: Mode, body: str, msg_id: str | None = None) -> dict[str, Any]:
    return {"msgV": MSGV, "msg_id": msg_id or new_id(), "type": "user",
            "message": {"role": "user", "content": wrap(sender, name, mode, body)}, "priority": "next",
            "from": sender}  # fmt: skip


def control_frame(action: str, sender: str, **fields: Any) -> dict[str, Any]:
    """A control frame with claude's key order: type, action, the action's fields, from, then msgV and msg_id."""
    return {"type": "control", "action": action, **fields, "from": sender, "msgV": MSGV, "msg_id": new_id()}


def parse_frame(obj: object) -> Frame | None:
    """The frame in a decoded line; None for anything this protocol does not define (it is dropped)."""
    if not isinstance(obj, dict):
        return None
    sender, msg_id = obj.get("from"), obj.get("msg_id")
    if not isinstance(sender, str) or not sender.startswith(SCHEMES) or not isinstance(msg_id, str):
        return None

    def text(key: str) -> str:
        value = obj.get(key)
        return value if isinstance(value, str) else ""

    if obj.get("type") == "user":
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        found = unwrap(content) if isinstance(content, str) else None
        if found is None or found[0].get("from") != sender:  # the wrapper must name the frame's own sender
            return None
        return Frame("user", msg_id, sender, found[1], found[0], raw=obj)
    action = obj.get("action")
    if obj.get("type") != "control" or action not in CONTROLS:
        return None
    finished = obj.get("finished_at")
    detail = text("status_detail") or text("detail")
    return Frame(action, msg_id, sender, mode=text("from_mode"), orig_msg_id=text("orig_msg_id"),
                 status=text("status") or text("state"), detail=detail, reason=text("reason"),
                 finished_at=finished if isinstance(finished, int) else 0, raw=obj)  # fmt: skip


def unread(obj: object) -> tuple[bool, str]:
    """What `parse_frame` refused, in words, and whether to say so as a warning: a control action this protocol does
    not define (a newer claude's) is only a debug line; anything else lost a message."""
    if not isinstance(obj, dict):
        return True, f"a frame that is not a JSON object ({type(obj).__name__})"
    kind, action = obj.get("type"), obj.get("action")
    if kind == "control" and isinstance(obj.get("from"), str) and action not in CONTROLS:
        return False, f"a control frame of an action this session does not know ({str(action)[:40]!r})"
    return True, f"a frame this session cannot read (type {str(kind)[:40]!r}, from {str(obj.get('from'))[:120]!r})"


def encode(token: str, frame: dict[str, Any]) -> bytes:
    """The bytes of one connection: the auth line, then the frame."""
    auth = json.dumps({"type": "auth", "token": token}, separators=(",", ":"))
    return (auth + "\n" + json.dumps(frame, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def decode(data: bytes) -> tuple[str, dict[str, Any]] | None:
    """The token and the frame object of one connection's bytes; None when they are not an auth line and a frame."""
    lines = [line for line in data.split(b"\n") if line.strip()]
    if len(lines) != 2:
        return None
    try:
        auth, frame = json.loads(lines[0]), json.loads(lines[1])
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(auth, dict) or auth.get("type") != "auth" or not isinstance(frame, dict):
        return None
    token = auth.get("token")
    return (token, frame) if isinstance(token, str) else None


def signed_bytes(frame: dict[str, Any]) -> bytes:
    """What a signature covers: the domain and the whole frame but the signature, as sorted compact JSON."""
    rest = {k: v for k, v in frame.items() if k != SIG_FIELD}
    return json.dumps([SIG_DOMAIN, rest], sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")
