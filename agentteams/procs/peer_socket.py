"""A session's messaging socket where claude 2.1.332 puts its (`/tmp/cc-socks/<pid>.sock`; `cc-socks-<uid>` for others
than root): the directory 0700 and ours, the socket 0600, only our uid heard (SO_PEERCRED); a connection is read to
its end (bounded), what it carried handed on, then closed: the close is the sender's only answer (it was taken)."""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.procs.socket_dir import SUN_PATH_MAX, ensure_private
from agentteams.store.peer_wire import MAX_LINE

_CLAIMED: set[str] = set()  # paths a listener of this process holds: one pid, one socket (a second session in the
_CLAIMED_LOCK = threading.Lock()  # same process, an in-process test's, goes without)
READ_TIMEOUT = 5.0  # a connection that sends nothing for this long is dropped
SEND_TIMEOUT = 5.0  # a receiver that has not closed by then did not take the message


class PeerSocketError(AgentTeamsError):
    """A message that could not be handed to the receiving session's socket."""


@dataclass(frozen=True)
class Inbound:
    """One connection's bytes and who sent them (the kernel's word: SO_PEERCRED)."""

    data: bytes
    pid: int


def socket_dir() -> Path:
    """claude's directory for these sockets, made (0700) or checked to be ours alone."""
    uid = os.getuid()
    return ensure_private(Path("/tmp/cc-socks" if uid == 0 else f"/tmp/cc-socks-{uid}"))


def socket_path(pid: int | None = None) -> Path:
    path = socket_dir() / f"{os.getpid() if pid is None else pid}.sock"
    if len(os.fsencode(path)) > SUN_PATH_MAX:
        raise PeerSocketError(f"{path} is too long for a Unix socket")
    return path


class Listener:
    """Accepts connections on `path` in a daemon thread and gives each one's bytes to `handle`."""

    def __init__(self, path: Path, handle: Callable[[Inbound], None]) -> None:
        self.path, self.handle = path, handle
        self._sock: socket.socket | None = None
        self._closed = threading.Event()

    def start(self) -> None:
        with _CLAIMED_LOCK:
            if str(self.path) in _CLAIMED:
                raise PeerSocketError(f"{self.path} is held by another session of this process")
            _CLAIMED.add(str(self.path))
        with contextlib.suppress(FileNotFoundError):  # our own pid's path: whatever is there was left by a dead one
            if self.path.is_socket():
                self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._bind(sock)
            sock.listen(16)
        except BaseException:  # nothing of a start that failed stays: its socket, its claim on the path
            sock.close()
            with _CLAIMED_LOCK:
                _CLAIMED.discard(str(self.path))
            raise
        self._sock = sock
        threading.Thread(target=self._accept, name="peer-socket", daemon=True).start()

    def _bind(self, sock: socket.socket) -> None:
        old = os.umask(0o177)  # the socket is made 0600, with no moment open to others
        try:
            try:
                sock.bind(str(self.path))
            except FileNotFoundError:  # the directory (claude's too) was removed meanwhile: made again, bound again
                socket_dir()
                sock.bind(str(self.path))
        finally:
            os.umask(old)

    def _accept(self) -> None:
        assert self._sock is not None
        while not self._closed.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(conn,), name="peer-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:  # closed once the frame is handled: the sender's "taken" then means this session has it
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, _gid = struct.unpack("3i", creds)
            if uid != os.getuid():
                return  # another user's process: closed unread
            data = _read_all(conn)
            if not data:
                return
            try:  # handling only queues (a message for the model, a notice): it never waits on a person
                self.handle(Inbound(data, pid))
            except Exception as e:  # one bad frame must not end the listener
                diagnostics.warning("a message from another session was dropped: %s: %s", type(e).__name__, e)

    def close(self) -> None:
        if self._closed.is_set() or self._sock is None:
            return  # never started (its path may be another listener's): nothing of its own to take away
        self._closed.set()
        with contextlib.suppress(OSError):  # wakes the accepting thread: a close alone leaves it blocked for good
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            if self.path.is_socket():
                self.path.unlink()
        with _CLAIMED_LOCK:
            _CLAIMED.discard(str(self.path))


def _read_all(conn: socket.socket) -> bytes:
    conn.settimeout(READ_TIMEOUT)
    chunks: list[bytes] = []
    size = 0
    with contextlib.suppress(OSError):
        while size <= MAX_LINE * 2:
            chunk = conn.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
    return b""  # too long, or cut off: not a frame


def deliver(path: str, data: bytes, timeout: float = SEND_TIMEOUT) -> None:
    """Hand `data` to the socket at `path` and wait for the receiver to close (it took it); PeerSocketError if not."""
    deadline = time.monotonic() + timeout
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(path)
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            while time.monotonic() < deadline:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                if not sock.recv(4096):
                    return
    except OSError as e:
        raise PeerSocketError(f"{path}: {e.strerror or e}") from None
    raise PeerSocketError(f"{path}: the session did not take the message within {timeout:g}s")
