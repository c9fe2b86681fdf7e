"""State writes a full or read-only disk refused (a teammate's `isActive`, its idle notice), held in order and written
again once the disk takes them: dropped, they left the lead waiting for a teammate that never said it was idle."""

from __future__ import annotations

import threading
from collections.abc import Callable

from agentteams import diagnostics
from agentteams.errors import NotSentError
from agentteams.store import write_failures
from agentteams.store.outages import StoreUnavailable
from agentteams.store.write_failures import WriteKind

Write = Callable[[], None]


def refused(error: BaseException) -> bool:
    """A write the disk refused and that left nothing behind: written again later, it cannot be there twice. Or one
    a store away past its deadline did not take (an idle notice again after one that went through before the reply
    was lost is coalesced by the lead; an isActive is the same value twice)."""
    return isinstance(error, (OSError, NotSentError, StoreUnavailable))


class HeldWrites:
    """Each write is tried after the ones held before it (the lead reads them in the order they were made); a write
    under a key already held replaces it (only the latest `isActive` matters)."""

    def __init__(self, who: str) -> None:
        self.who = who
        self._lock = threading.RLock()  # the runtime's loop and its state-writing worker both write
        self._held: dict[str, tuple[Write, WriteKind, str]] = {}
        self._refused: set[WriteKind] = set()  # kinds refused since they last went through

    @property
    def pending(self) -> bool:
        return bool(self._held)

    def write(self, key: str, write: Write, kind: WriteKind, target: str) -> None:
        """Write now, after whatever is held; held itself when the disk refuses it (one warning while it refuses, as
        every refused write gets). `write` deals with its other errors itself."""
        with self._lock:
            self._held.pop(key, None)
            self._held[key] = (write, kind, target)
            self.retry()

    def retry_soon(self) -> None:
        """From another thread (the heartbeat, while a long turn runs): what is held, unless a write is under way."""
        if not self._held or not self._lock.acquire(blocking=False):
            return
        try:
            self.retry()
        finally:
            self._lock.release()

    def retry(self) -> bool:
        """Write what is held, oldest first, up to the first the disk still refuses; True when none is left."""
        with self._lock:
            while self._held:
                key, (write, kind, target) = next(iter(self._held.items()))
                try:
                    write()
                except Exception as e:
                    if not refused(e):
                        self._held.pop(key, None)  # not the disk's doing: writing it again would not help
                        raise
                    if isinstance(e, StoreUnavailable):  # the store said it was away, once: kept quietly
                        diagnostics.debug("%s: %s kept until the store is back: %s", self.who, target, e)
                        return False
                    write_failures.failed(kind, target, e, held=True)
                    self._refused.add(kind)
                    return False
                if kind in self._refused:  # the next refusal warns again (a first success says nothing of the disk)
                    self._refused.discard(kind)
                    write_failures.succeeded(kind)
                self._held.pop(key, None)
                if not self._held:
                    diagnostics.debug("%s: every held write is written", self.who)
            return True
