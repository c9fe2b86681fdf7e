"""The kernel queue our processes wait in before the mkdir lock: flock on a hidden file beside the target, waited
for with a deadline (a helper thread blocks in the kernel; the caller waits on it with a timeout), so no wait
outlasts its deadline, even behind a stopped holder."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Literal

from agentteams.errors import LockTimeoutError

STALE_SECONDS = 10.0  # proper-lockfile's rule: a lock dir not touched for this long is abandoned
STUCK_CHECK_SECONDS = 0.25  # how often a waiter looks whether the queue's holder has gone stale
Queued = Literal["queued", "bypass"]


def portalocker() -> Any:
    # imported on first use: it costs ~50 ms at start-up, and commands that only read take no lock
    import portalocker

    return portalocker


def flock_exclusive(fh: IO[bytes]) -> None:
    """Block (in the kernel, no spinning) until `fh` is exclusively locked."""
    pl = portalocker()
    pl.lock(fh, pl.LOCK_EX)


def flock_shared(fh: IO[bytes]) -> None:
    pl = portalocker()
    pl.lock(fh, pl.LOCK_SH)


def flock_release(fh: IO[bytes]) -> None:
    portalocker().unlock(fh)


def try_exclusive(fh: IO[bytes]) -> bool:
    pl = portalocker()
    try:
        pl.lock(fh, pl.LOCK_EX | pl.LOCK_NB)
    except pl.LockException:
        return False
    return True


def stale(lock_dir: Path) -> bool:
    """Whether `lock_dir` exists and has gone STALE_SECONDS without a refresh (its holder is gone or stuck)."""
    try:
        return time.time() - os.stat(lock_dir).st_mtime > STALE_SECONDS
    except FileNotFoundError:
        return False


def timeout_error(deadline: float, lock_dir: Path) -> LockTimeoutError:
    return LockTimeoutError(
        f"timed out after {deadline:g}s waiting for lock {lock_dir} "
        f"(another process holds it; it is broken automatically once {STALE_SECONDS:.0f}s stale)"
    )


class _Waiter:
    """A thread blocked in the kernel on the queue's flock (through a duplicate of its descriptor, which shares
    the lock), so a waiter wakes the moment the holder lets go yet can still stop waiting at its deadline."""

    def __init__(self, queue: IO[bytes]) -> None:
        self._fd = os.dup(queue.fileno())
        self._mutex = threading.Lock()
        self._got = threading.Event()
        self._abandoned = False
        threading.Thread(target=self._run, name="agentteams-lock-queue", daemon=True).start()

    def _run(self) -> None:
        try:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            except OSError:
                return  # the caller's own checks and deadline still end its wait
            with self._mutex:
                if self._abandoned:  # too late: let the next one have it
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                else:
                    self._got.set()
        finally:
            os.close(self._fd)  # the lock stays with the queue file's own descriptor until it unlocks

    def wait(self, seconds: float) -> bool:
        return self._got.wait(max(0.0, seconds))

    def abandon(self) -> bool:
        """Stop waiting; True if the lock was taken meanwhile (then the caller holds it after all)."""
        with self._mutex:
            self._abandoned = not self._got.is_set()
            return not self._abandoned


def wait_queue(queue: IO[bytes], start: float, deadline: float, lock_dir: Path, stuck: Callable[[], bool]) -> Queued:
    """Take the flock on `queue`: "queued" once held; "bypass" when its holder is stuck.

    A live holder of ours refreshes its lock, so `stuck()` (its lock, or its record of it, has gone stale),
    or a queue held for the whole staleness period, means the holder is stopped or hung: the caller then goes
    for the mkdir lock as the real CLI does (always safe: the mkdir lock alone excludes), so a stopped process
    delays others by about the staleness period, never the whole stop.
    Raises LockTimeoutError once `deadline` seconds have passed since `start` (monotonic).
    """
    if try_exclusive(queue):
        return "queued"
    if stuck():
        return "bypass"
    waiter = _Waiter(queue)
    outcome: Queued | None = None
    while outcome is None:
        waited = time.monotonic() - start
        if waited >= STALE_SECONDS or stuck():
            outcome = "bypass"
        elif waited >= deadline:
            break
        elif waiter.wait(min(STUCK_CHECK_SECONDS, deadline - waited)):
            return "queued"
    if waiter.abandon():
        return "queued"
    if outcome is None:
        raise timeout_error(deadline, lock_dir)
    return outcome
