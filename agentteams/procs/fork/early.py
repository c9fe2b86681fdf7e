"""A teammate the lead starts before its pane exists: the fork server child's side. Its output is held and its
environment is the lead's until the pane's launcher attaches to the child's own socket (`fs-<pid>.sock`, spoken to
exactly as the fork server is), so the pane's start (~20-40 ms of tmux and launcher) is off the first request's path."""

from __future__ import annotations

import contextlib
import io
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agentteams.backends.tmux import current_pane
from agentteams.procs import launcher as launch

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

ATTACH_WAIT = 10.0  # a pane not attached by then never will be (closed, or it failed to start): we hang up


class HeldOutput(io.RawIOBase):
    """fd 1 or 2 under a text stream: written through once the pane has attached (its tty dup'd there), kept
    until then. It answers `isatty` for the pane it will be, so renderers choose colour as they would in it."""

    def __init__(self, fd: int, tty: bool) -> None:
        super().__init__()
        self.fd = fd
        self._tty = tty
        self._held: list[bytes] | None = []
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return self._tty if self._held is not None else os.isatty(self.fd)

    def write(self, b: WriteableBuffer, /) -> int:
        data = bytes(b)
        with self._lock:
            if self._held is not None:
                self._held.append(data)
            else:
                _write_all(self.fd, data)
        return len(data)

    def release(self) -> None:
        """The pane's fd is in place: what was held goes there first, in order, then every write."""
        with self._lock:
            held, self._held = self._held or [], None
            with contextlib.suppress(OSError):  # a pane closed at once: its launcher's EOF ends us next
                for data in held:
                    _write_all(self.fd, data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _held_stream(stream: TextIO, fd: int) -> tuple[io.TextIOWrapper, HeldOutput]:
    """`stream` (fd 1 or 2, as the fork server set it up) over a `HeldOutput` instead, line-buffered as on a tty."""
    raw = HeldOutput(fd, tty=True)
    text = io.TextIOWrapper(io.BufferedWriter(raw), stream.encoding, stream.errors, line_buffering=True,
                            write_through=getattr(stream, "write_through", False))  # fmt: skip
    return text, raw


class LateLauncher:
    """The pane's launcher as the child's connection: `recv` and `sendall` first take its attach (at most
    ATTACH_WAIT after the start); a launcher that never comes reads as EOF, as a closed pane's does."""

    def __init__(self, listener: socket.socket, path: Path, outputs: list[HeldOutput], keep: frozenset[str]) -> None:
        self._listener = listener
        self._path = path
        self._outputs = outputs
        self._keep = keep  # credentials: ours came from the lead's fork server and stay as they are
        self._deadline = time.monotonic() + ATTACH_WAIT
        self._conn: socket.socket | None = None
        self._done = False
        self._lock = threading.Lock()  # held through the attach: a second caller waits for its outcome
        self._pane_lock = threading.Lock()  # never held through a wait: the runtime asks for its pane id at once
        self._on_pane: list[Callable[[str], None]] = []
        self.pane: str | None = None

    def recv(self, size: int) -> bytes:
        conn = self._attached()
        return conn.recv(size) if conn is not None else b""

    def sendall(self, data: bytes) -> None:
        conn = self._attached()
        if conn is None:
            raise ConnectionError("the teammate's pane never attached")
        conn.sendall(data)

    def on_pane(self, callback: Callable[[str], None]) -> None:
        """`callback(pane id)` once attached (at once if it is)."""
        with self._pane_lock:
            if self.pane is None:
                self._on_pane.append(callback)
                return
        callback(self.pane)

    def _attached(self) -> socket.socket | None:
        with self._lock:  # the first caller attaches (or gives up); the others wait for that
            if not self._done:
                try:
                    self._conn = self._attach()
                except Exception:  # no launcher (closed pane, timeout, bad request): we hang up as without a pane
                    self._conn = None
                finally:
                    self._done = True
                    self._listener.close()
                    with contextlib.suppress(OSError):
                        self._path.unlink()
        return self._conn

    def _attach(self) -> socket.socket:
        while True:
            self._listener.settimeout(max(0.001, self._deadline - time.monotonic()))
            conn, _ = self._listener.accept()
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[1] == os.getuid():  # only our own uid gets a teammate's stdio
                break
            conn.close()
        request, fds = launch.read_request(conn, ATTACH_WAIT, 3)
        for key, value in request.env.items():  # the pane's own (TMUX, TMUX_PANE, TERM, tmux's environment)
            if key not in os.environ and key not in self._keep and key not in (launch.ENV_VAR, launch.FALLBACK_VAR):
                os.environ[key] = value
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        for out in self._outputs:
            out.release()
        conn.sendall(launch.FRAME.pack(b"P", os.getpid()))
        with self._pane_lock:
            self.pane = current_pane() or ""  # from the environment just taken
            callbacks, self._on_pane = self._on_pane, []
        for callback in callbacks:
            callback(self.pane)
        return conn


_late: LateLauncher | None = None
_lead: socket.socket | None = None  # the lead's connection while it waits for our first request
REQUEST_OUT = b"R"


def hold(lead: socket.socket, server_socket: str | None, keep: frozenset[str]) -> LateLauncher:
    """In a child the lead asked for early (our pid sent to it already): hold our output, listen for the pane's
    launcher, and run on the lead's go-ahead (a lead that gave up closes instead: we exit, no teammate runs twice)."""
    global _late
    if not server_socket:
        raise ValueError("an early start names no fork server socket")
    path = Path(server_socket).parent / f"fs-{os.getpid()}.sock"
    if path.is_socket():  # our pid is in its name: a dead process's (a killed server's or teammate's) file
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    try:
        listener.listen(1)
        outputs = _hold_stdio()
        lead.settimeout(ATTACH_WAIT)
        if lead.recv(1) != launch.GO:
            raise SystemExit(1)
    except BaseException:
        listener.close()
        path.unlink()
        raise
    global _lead
    _lead = lead  # kept until our first request is out (request_out): the lead makes our pane after that
    _late = LateLauncher(listener, path, outputs, keep)
    return _late


def request_out() -> None:
    """Our first model request is on its way: say so to the lead, which waits for that to make our pane (the pane's
    making would take the CPU our start needs). Later calls, and a process not started early, do nothing."""
    global _lead
    conn, _lead = _lead, None
    if conn is not None:
        with contextlib.suppress(OSError):
            conn.sendall(REQUEST_OUT)
        conn.close()


def _hold_stdio() -> list[HeldOutput]:
    sys.stdout, out = _held_stream(sys.stdout, 1)
    sys.stderr, err = _held_stream(sys.stderr, 2)
    return [out, err]


def awaiting_pane() -> bool:
    """Whether this process started before its pane (its pane id comes with the launcher's attach)."""
    return _late is not None


def on_pane(callback: Callable[[str], None]) -> None:
    """`callback(pane id)` when the pane attaches; never for a process that did not start early."""
    if _late is not None:
        _late.on_pane(callback)
