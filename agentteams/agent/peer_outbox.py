"""The idle notices a session owes other sessions, sent from a thread of their own: a turn's end never waits for
another session (each send may wait up to the socket's timeout for a receiver that does not answer)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from agentteams import diagnostics
from agentteams.procs.peer_socket import SEND_TIMEOUT

WAITING = 64  # sends waiting at most: one more is dropped with a warning, never waited for
DRAIN = SEND_TIMEOUT  # how long `close` lets the waiting sends go out (a -p run closes as its turn ends)


class Outbox:
    """Sends run in order by one worker thread, started at the first; `close` lets the waiting ones go out for up to
    DRAIN seconds, then the worker drops the rest and ends."""

    def __init__(self) -> None:
        self._sends: deque[Callable[[], None]] = deque()
        self._changed = threading.Condition()
        self._worker: threading.Thread | None = None
        self._closed = False

    def post(self, send: Callable[[], None], what: str) -> None:
        """Run `send` on the worker; `what` names it in the warning if it cannot wait."""
        with self._changed:
            if self._closed:
                return  # the session is going: its record, and so its address, goes with it
            if len(self._sends) >= WAITING:
                diagnostics.warning("could not %s: %d notices are already waiting to go out", what, WAITING)
                return
            self._sends.append(send)
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="peer-outbox", daemon=True)
                self._worker.start()
            self._changed.notify()

    def close(self) -> None:
        with self._changed:
            self._closed, worker = True, self._worker
            self._changed.notify()
        if worker is None:
            return
        worker.join(DRAIN)
        with self._changed:  # what still waits is dropped; a send in flight ends by its own timeout
            self._sends.clear()

    def _work(self) -> None:
        while True:
            with self._changed:
                while not self._sends and not self._closed:
                    self._changed.wait()
                if not self._sends:
                    return
                send = self._sends.popleft()
            send()
