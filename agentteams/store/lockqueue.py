"""The kernel queue our processes wait in before the mkdir lock: flock on a hidden file beside the target, taken
with non-blocking attempts and a sleeping backoff so every wait has a deadline, even behind a stopped holder."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Literal

from agentteams.errors import LockTimeoutError

STALE_SECONDS = 10.0  # proper-lockfile's rule: a lock dir not touched for this long is abandoned
QUEUE_MIN_BACKOFF = 0.001
QUEUE_MAX_BACKOFF = 0.02  # a waiter sleeps at most this long between attempts: a release is seen soon
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


def _try_exclusive(fh: IO[bytes]) -> bool:
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


def wait_queue(queue: IO[bytes], start: float, deadline: float, lock_dir: Path, stuck: Callable[[], bool]) -> Queued:
    """Take the flock on `queue`: "queued" once held; "bypass" when its holder is stuck.

    A live holder of ours refreshes its lock, so `stuck()` (its lock, or its record of it, has gone stale),
    or a queue held for the whole staleness period, means the holder is stopped or hung: the caller then goes
    for the mkdir lock as the real CLI does (always safe: the mkdir lock alone excludes), so a stopped process
    delays others by about the staleness period, never the whole stop.
    Raises LockTimeoutError once `deadline` seconds have passed since `start` (monotonic).
    """
    backoff = QUEUE_MIN_BACKOFF
    while not _try_exclusive(queue):
        waited = time.monotonic() - start
        if waited >= STALE_SECONDS or stuck():
            return "bypass"
        if waited >= deadline:
            raise timeout_error(deadline, lock_dir)
        time.sleep(min(backoff, max(0.0, deadline - waited)))
        backoff = min(QUEUE_MAX_BACKOFF, backoff * 2)
    return "queued"
