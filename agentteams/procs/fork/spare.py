"""The fork server's spare child: forked ahead of time, it accepts the next connection itself on the server's
listener and becomes its child, so a spawn waits neither for a fork (3 ms quiet, 10+ loaded) nor for the server."""

from __future__ import annotations

import os
import select
import signal
import socket
import struct
import time
from collections.abc import Callable
from typing import NoReturn

REFILL_DELAY = 0.04  # seconds after a spare is taken before the next is forked: past the way to its first request
TAKEN = b"t"


class Spare:
    """At most one waiting child. `fill()` forks it (the server then watches the returned socket instead of its
    listener); `taken()` when that socket speaks or closes; `due()` says when to fill again: a little later, so the
    next fork does not compete for the CPU with the teammate the last spare became."""

    def __init__(
        self, listener: socket.socket, become: Callable[[socket.socket], NoReturn], drop: Callable[[], None]
    ) -> None:
        self._listener = listener
        self._become = become  # in the spare, with the connection: run the child; never returns
        self._drop = drop  # in the spare, once it has its connection: let go of the server's descriptors
        self._sock: socket.socket | None = None  # our end of the pair the spare reports on
        self.refill_at: float | None = time.monotonic()

    def due(self) -> float | None:
        """Seconds until a spare should be forked (0: now); None while one waits."""
        return None if self.refill_at is None else max(0.0, self.refill_at - time.monotonic())

    def fill(self) -> socket.socket | None:
        """Fork the spare; the socket it reports on, or None when it cannot fork (connections fork their own)."""
        self.refill_at = None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            self.refill_at = time.monotonic() + REFILL_DELAY
            return None
        if pid == 0:
            ours.close()
            self._wait(theirs)
        theirs.close()
        self._sock = ours
        return ours

    def taken(self) -> None:
        """The spare took a connection (or died): the server listens again, and a new spare comes shortly."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self.refill_at = time.monotonic() + REFILL_DELAY

    def close(self) -> None:
        """Stop: the waiting spare reads EOF and exits."""
        self.refill_at = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _wait(self, sock: socket.socket) -> NoReturn:
        """In the spare: accept the next connection from our own uid (EOF from the server: stop), tell the server,
        then become its child."""
        try:
            for signum in (signal.SIGTERM, signal.SIGHUP):
                signal.signal(signum, signal.SIG_DFL)  # the server's handlers are not ours: a stopped spare just ends
            conn = self._accept(sock)
            if conn is not None:
                sock.sendall(TAKEN)
                sock.close()
                self._drop()
                self._become(conn)
        finally:
            os._exit(0)

    def _accept(self, sock: socket.socket) -> socket.socket | None:
        poller = select.poll()
        poller.register(self._listener, select.POLLIN)
        poller.register(sock, select.POLLIN)
        while True:
            events = dict(poller.poll())
            if sock.fileno() in events:
                return None  # the server stopped (or wrote to us out of turn): no connection will be ours
            try:
                conn, _ = self._listener.accept()
            except BlockingIOError:
                continue
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[1] == os.getuid():  # anyone else would get a process holding the API key
                conn.setblocking(True)
                return conn
            conn.close()
