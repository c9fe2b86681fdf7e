"""Claude Code's registry of live sessions, shared with it: `sessions/<pid>.json` (a session, its messaging socket, busy
or idle) and `sessions/<pid>.<sha256 of the socket path>.key` (the token a sender shows that socket), as 2.1.332
writes them; a record whose process is gone (or is another process under a reused pid) is not a live session."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentteams import diagnostics
from agentteams.pids import pid_alive, proc_start
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_json, epoch_ms, json_object, read_bytes
from agentteams.store.paths import Layout

PEER_PROTOCOL = 1
VERSION = "2.1.332"  # the Claude Code release whose peer protocol ours speaks (its sessions read `version`)
FEATURES = ("notify_idle",)  # of claude's peerFeatures, those ours honours
KEY_FIELD = "agentteamsKey"  # ours only: the session's public key; frames between two of ours are signed with it
OURS_FIELD = "agentteams"  # ours only: marks a session of ours (its key may come later, with its first message)
HOST_FIELD = "agentteamsHost"  # ours only, in a record published to the Redis store: the machine the session runs on
REMOTE_SCHEME = "redis:"  # the address of a session reached through the Redis store: `redis:<session id>`
Status = Literal["idle", "busy"]


def sessions_dir(layout: Layout) -> Path:
    return layout.root / "sessions"


def record_path(layout: Layout, pid: int) -> Path:
    return sessions_dir(layout) / f"{pid}.json"


def key_path(layout: Layout, pid: int, socket_path: str) -> Path:
    digest = hashlib.sha256(socket_path.encode("utf-8")).hexdigest()
    return sessions_dir(layout) / f"{pid}.{digest}.key"


@functools.cache
def pid_domain() -> str:
    """`linux:<machine-id>:pid:[<pid namespace>]`, claude's `pidDomain`: pids compare only within one."""
    machine = ""
    with contextlib.suppress(OSError):
        machine = Path("/etc/machine-id").read_text(encoding="ascii").strip()
    space = ""
    with contextlib.suppress(OSError):
        space = os.readlink("/proc/self/ns/pid")
    return f"linux:{machine}:{space}"


@dataclass
class SessionRecord:
    """One live session's entry. `raw` is the object as read (claude's other keys kept)."""

    pid: int
    session_id: str
    cwd: str
    name: str
    socket_path: str
    status: str = "idle"
    kind: str = "interactive"
    started_ms: int = 0
    proc_start: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    host: str = ""  # set only on a record read from the Redis store (`remote_record`): reached through it

    @property
    def address(self) -> str:
        """The `from` a message of this session carries: `uds:<socket path>`, or `redis:<session id>` for one
        reached through the Redis store."""
        return f"{REMOTE_SCHEME}{self.session_id}" if self.host else f"uds:{self.socket_path}"

    @property
    def public_key(self) -> str | None:
        value = self.raw.get(KEY_FIELD)
        return value if isinstance(value, str) else None

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> SessionRecord | None:
        """None for an object that is not a messaging session's record (no pid, no socket)."""
        pid, sock, sid = obj.get("pid"), obj.get("messagingSocketPath"), obj.get("sessionId")
        if not isinstance(pid, int) or not isinstance(sock, str) or not sock or not isinstance(sid, str):
            return None

        def text(key: str, default: str = "") -> str:
            value = obj.get(key)
            return value if isinstance(value, str) else default

        started = obj.get("startedAt")
        return cls(pid, sid, text("cwd"), text("name"), sock, text("status", "idle"), text("kind", "interactive"),
                   started if isinstance(started, int) else 0, text("procStart"), raw=obj)  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        out = dict(self.raw)
        out.update(pid=self.pid, sessionId=self.session_id, cwd=self.cwd, startedAt=self.started_ms,
                   procStart=self.proc_start, messagingSocketPath=self.socket_path, name=self.name, kind=self.kind,
                   status=self.status)  # fmt: skip
        return out


def new_record(session_id: str, cwd: str, name: str, socket_path: str, kind: str, entrypoint: str,
               public_key: str | None) -> SessionRecord:  # fmt: skip
    """This process's record, in claude 2.1.332's key order."""
    pid, now = os.getpid(), epoch_ms()
    started = proc_start(pid) or ""
    raw: dict[str, Any] = {
        "pid": pid, "sessionId": session_id, "cwd": cwd, "startedAt": now, "procStart": started, "version": VERSION,
        "peerProtocol": PEER_PROTOCOL, "peerFeatures": list(FEATURES), "kind": kind, "entrypoint": entrypoint,
        "pidDomain": pid_domain(), "messagingSocketPath": socket_path, "name": name, "nameSource": "user",
        "nameSince": now, "updatedAt": now, "status": "idle", "statusUpdatedAt": now,
    }  # fmt: skip
    raw[OURS_FIELD] = PEER_PROTOCOL
    if public_key:
        raw[KEY_FIELD] = public_key
    return SessionRecord(pid, session_id, cwd, name, socket_path, "idle", kind, now, started, raw=raw)


def remote_record(obj: dict[str, Any]) -> SessionRecord | None:
    """A record as read from the Redis store; None without the host its publisher named."""
    record = SessionRecord.from_json(obj)
    host = obj.get(HOST_FIELD)
    if record is None or not isinstance(host, str) or not host:
        return None
    record.host = host
    return record


def write_record(layout: Layout, record: SessionRecord, status: Status | None = None) -> None:
    """Write (or rewrite with a new status) this process's record; the directory is made 0700 as claude makes it."""
    now = epoch_ms()
    if status is not None and status != record.status:
        record.status = status
        record.raw["statusUpdatedAt"] = now
    record.raw["updatedAt"] = now
    _make_dir(layout)
    atomic_write_json(record_path(layout, record.pid), record.to_json())


def _make_dir(layout: Layout) -> None:
    directory = sessions_dir(layout)
    if not directory.is_dir():
        safe_paths.make_dir(directory, parents=True)
        with contextlib.suppress(OSError):
            os.chmod(directory, 0o700)


def write_token(layout: Layout, record: SessionRecord, token: str) -> None:
    """The key file a sender reads to show our socket the token (0600: only our uid reads it)."""
    data = {"peerToken": token, "procStart": record.proc_start, "pidDomain": record.raw.get("pidDomain", "")}
    _make_dir(layout)
    atomic_write_json(key_path(layout, record.pid, record.socket_path), data)


def read_token(layout: Layout, record: SessionRecord) -> str | None:
    """The receiver's token, None when its key file is missing or belongs to another process."""
    obj = json_object(read_bytes(key_path(layout, record.pid, record.socket_path)))
    if obj is None:
        return None
    token = obj.get("peerToken")
    if obj.get("procStart") not in (None, record.proc_start) or not isinstance(token, str):
        return None
    return token


def remove_record(layout: Layout, record: SessionRecord) -> None:
    for path in (record_path(layout, record.pid), key_path(layout, record.pid, record.socket_path)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def live_records(layout: Layout) -> list[SessionRecord]:
    """Every session whose process still runs (its pid alive with the start time it recorded), oldest first."""
    try:
        names = os.listdir(sessions_dir(layout))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        stem, _, ext = name.partition(".")
        if ext != "json" or not stem.isdigit():
            continue
        try:
            obj = json_object(read_bytes(sessions_dir(layout) / name))
        except OSError as e:
            diagnostics.warning("skipping session record %s: %s", name, e)
            continue
        record = SessionRecord.from_json(obj) if obj is not None else None
        if record is None or record.pid != int(stem):
            continue
        if not pid_alive(record.pid):
            _sweep(layout, record)
            continue
        if record.proc_start and proc_start(record.pid) not in (None, record.proc_start):
            continue  # the pid was reused: not that session any more
        found.append(record)
    return sorted(found, key=lambda r: r.started_ms)


def _sweep(layout: Layout, record: SessionRecord) -> None:
    """A dead session's record and key files go, as claude sweeps them: only for a pid of this machine and pid
    namespace (elsewhere a pid says nothing here), and only the record as read (a new session under the pid keeps its
    own)."""
    if record.raw.get("pidDomain") != pid_domain():
        return
    path = record_path(layout, record.pid)
    if json_object(read_bytes(path)) != record.raw:
        return
    with contextlib.suppress(OSError):
        for key in sessions_dir(layout).glob(f"{record.pid}.*.key"):
            key.unlink()
        path.unlink()


def by_pid(layout: Layout, pid: int) -> SessionRecord | None:
    obj = json_object(read_bytes(record_path(layout, pid)))
    record = SessionRecord.from_json(obj) if obj is not None else None
    return record if record is not None and record.pid == pid else None
