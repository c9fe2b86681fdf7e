"""The fork server's spare child: forked ahead of the next connection and waiting for it, so a spawn does not wait for
a fork (3 ms quiet, 10 ms and more on a loaded machine). A new spare is forked a little after one is used: its own
fork then does not compete with the teammate it became for the CPU."""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable
from typing import NoReturn

REFILL_DELAY = 0.2  # seconds after a spare is taken before the next is forked (back-to-back spawns fork at once)


class Spare:
    """At most one waiting child. `take(conn)` hands it an accepted connection; `due()` says when to `fill()`."""

    def __init__(self, become: Callable[[socket.socket], NoReturn], drop: Callable[[], None]) -> None:
        self._become = become  # in the spare, with the connection: run the child; never returns
        self._drop = drop  # in the spare, at once: let go of the server's descriptors
        self._sock: socket.socket | None = None  # our end of the pair the spare waits on
        self.refill_at: float | None = time.monotonic()

    def due(self) -> float | None:
        """Seconds until a spare should be forked (0: now); None when one waits already."""
        return None if self.refill_at is None else max(0.0, self.refill_at - time.monotonic())

    def fill(self) -> None:
        """Fork the spare (when it cannot, there is none: connections fork their own child)."""
        self.refill_at = None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            return
        if pid == 0:
            ours.close()
            self._wait(theirs)
        theirs.close()
        self._sock = ours

    def take(self, conn: socket.socket) -> bool:
        """Hand `conn` to the waiting spare; False when there is none (or it died): fork a child for it then."""
        sock, self._sock = self._sock, None
        if sock is None:
            self.refill_at = time.monotonic()
            return False
        try:
            socket.send_fds(sock, [b"c"], [conn.fileno()])
            return True
        except OSError:
            return False
        finally:
            sock.close()  # the spare has the connection, or is gone
            self.refill_at = time.monotonic() + REFILL_DELAY

    def close(self) -> None:
        """Stop: the waiting spare reads EOF and exits."""
        self.refill_at = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _wait(self, sock: socket.socket) -> NoReturn:
        """In the spare: wait for a connection (EOF: the server stopped), then become its child."""
        try:
            for signum in (signal.SIGTERM, signal.SIGHUP):
                signal.signal(signum, signal.SIG_DFL)  # the server's handlers are not ours: a stopped spare just ends
            self._drop()
            _, fds, _, _ = socket.recv_fds(sock, 1, 1)
            sock.close()
            if fds:
                self._become(socket.socket(fileno=fds[0]))
        finally:
            os._exit(0)
