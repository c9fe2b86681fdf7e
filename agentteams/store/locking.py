"""Claude Code's lock protocol (proper-lockfile: `mkdir <target>.lock`), fronted by an OS queue.

Our processes first queue on a kernel lock (portalocker/flock on a hidden never-replaced file beside the
target), so they sleep instead of spinning; then take the mkdir lock, which also excludes real `claude`.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from agentteams.errors import LockTimeoutError, NotFoundError
from agentteams.store import safefs

STALE_SECONDS = 10.0
REFRESH_SECONDS = 5.0
DEFAULT_DEADLINE = 15.0  # beyond STALE_SECONDS, so a stale lock is always broken before we give up
MIN_BACKOFF = 0.005
MAX_BACKOFF = 0.1
# The sticky bit marks a lock dir as one of ours from the instant mkdir creates it (the umask leaves it
# alone, proper-lockfile never sets it), so one left by a holder killed before writing its record is
# still recognised. Private to the user (issue 14): a real `claude` of the same user removes it all the same.
LOCK_DIR_MODE = 0o1700


def _portalocker() -> Any:
    # imported on first use: it costs ~50 ms at start-up, and commands that only read take no lock
    import portalocker

    return portalocker


def flock_exclusive(fh: IO[bytes]) -> None:
    """Block (in the kernel, no spinning) until `fh` is exclusively locked."""
    pl = _portalocker()
    pl.lock(fh, pl.LOCK_EX)


def flock_shared(fh: IO[bytes]) -> None:
    pl = _portalocker()
    pl.lock(fh, pl.LOCK_SH)


def flock_release(fh: IO[bytes]) -> None:
    _portalocker().unlock(fh)


def lock_dir_for(target: Path) -> Path:
    """The directory proper-lockfile creates for `target`."""
    return target.with_name(target.name + ".lock")


def queue_file_for(target: Path) -> Path:
    """The hidden file our own processes flock before racing for the mkdir lock."""
    return target.with_name(f".{target.name}.flock")


@dataclass(repr=False, eq=False)
class _Record:
    """Written into the queue file while held: lets the next holder spot a lock dir a dead holder left."""

    ino: int
    mtime_ns: int

    def encode(self) -> bytes:
        return f"{os.getpid()} {self.ino} {self.mtime_ns}\n".encode()

    @classmethod
    def decode(cls, raw: bytes) -> _Record | None:
        parts = raw.split()
        if len(parts) != 3:
            return None
        try:
            return cls(int(parts[1]), int(parts[2]))
        except ValueError:
            return None


class _Refresher:
    """One daemon thread per process that touches the mtime of locks held longer than REFRESH_SECONDS."""

    def __init__(self) -> None:
        self._held: dict[int, FileLock] = {}
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, lock: FileLock) -> None:
        with self._cond:
            self._held[id(lock)] = lock
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="agentteams-lock-refresh", daemon=True)
                self._thread.start()

    def remove(self, lock: FileLock) -> None:
        with self._cond:
            self._held.pop(id(lock), None)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait(timeout=1.0)
                due = [lk for lk in self._held.values() if time.monotonic() - lk.touched >= REFRESH_SECONDS]
            for lk in due:
                lk.refresh()


_REFRESHER = _Refresher()


class FileLock:
    """Exclusive lock on `target`, compatible with Claude Code's proper-lockfile usage."""

    def __init__(self, target: Path, *, deadline: float = DEFAULT_DEADLINE) -> None:
        self.target = target
        self.lock_dir = lock_dir_for(target)
        self.deadline = deadline
        self.touched = 0.0
        self._queue: IO[bytes] | None = None
        self._refresh_mutex = threading.Lock()

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self, *, unless: Callable[[], bool] | None = None) -> bool:
        """Take the lock; True once held.

        `unless` is called when this process is first in our processes' queue, before the mkdir lock:
        if it returns True the lock is not taken and acquire returns False (a cheap pass for a caller
        whose work another holder has already done).
        """
        try:
            queue = safefs.open_file(queue_file_for(self.target), "a+b")  # held until release(); never a link
        except FileNotFoundError as e:
            raise NotFoundError(f"cannot lock {self.target}: its directory does not exist") from e
        flock_exclusive(queue)
        try:
            if unless is not None and unless():
                flock_release(queue)
                queue.close()
                return False
            self._take_dir(queue)
        except BaseException:
            flock_release(queue)
            queue.close()
            raise
        self._queue = queue
        self.touched = time.monotonic()
        _REFRESHER.add(self)
        return True

    def _take_dir(self, queue: IO[bytes]) -> None:
        start = time.monotonic()
        backoff = MIN_BACKOFF
        while True:
            try:
                os.mkdir(self.lock_dir, LOCK_DIR_MODE)
            except FileExistsError:
                if self._break_if_dead(queue):
                    continue
            except FileNotFoundError as e:
                raise NotFoundError(f"cannot lock {self.target}: its directory does not exist") from e
            else:
                st = os.stat(self.lock_dir)
                self._write_record(queue, _Record(st.st_ino, st.st_mtime_ns))
                return
            if time.monotonic() - start > self.deadline:
                raise LockTimeoutError(
                    f"timed out after {self.deadline:.0f}s waiting for lock {self.lock_dir} "
                    f"(another process holds it; it is broken automatically once {STALE_SECONDS:.0f}s stale)"
                )
            time.sleep(backoff)
            backoff = min(MAX_BACKOFF, backoff * 2)

    def _break_if_dead(self, queue: IO[bytes]) -> bool:
        """Remove the lock dir if its holder is gone; True when the caller should retry at once."""
        try:
            st = os.lstat(self.lock_dir)
        except FileNotFoundError:
            return True
        if stat.S_ISLNK(st.st_mode):
            raise safefs.refused(self.lock_dir)
        queue.seek(0)
        record = _Record.decode(queue.read(128))
        # We hold the queue lock, so a lock dir one of ours made (sticky bit), or one a record left in
        # the queue file names, was left by a holder that died before releasing; a live holder always
        # removes both first.
        ours = bool(st.st_mode & stat.S_ISVTX)
        orphan = ours or (record is not None and (record.ino, record.mtime_ns) == (st.st_ino, st.st_mtime_ns))
        stale = time.time() - st.st_mtime > STALE_SECONDS
        if not (orphan or stale):
            return False
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(self.lock_dir)
        return True

    @staticmethod
    def _write_record(queue: IO[bytes], record: _Record | None) -> None:
        queue.seek(0)
        queue.truncate()
        if record is not None:
            queue.write(record.encode())
        queue.flush()

    def refresh(self) -> None:
        """Touch the lock dir so other processes do not take it for stale (proper-lockfile's `update`)."""
        with self._refresh_mutex:
            if self._queue is None:
                return
            try:
                os.utime(self.lock_dir)
                st = os.stat(self.lock_dir)
            except FileNotFoundError:
                return
            self._write_record(self._queue, _Record(st.st_ino, st.st_mtime_ns))
            self.touched = time.monotonic()

    def release(self) -> None:
        _REFRESHER.remove(self)
        with self._refresh_mutex:
            queue, self._queue = self._queue, None
            if queue is None:
                return
            try:
                with contextlib.suppress(FileNotFoundError):
                    os.rmdir(self.lock_dir)
                self._write_record(queue, None)
            finally:
                flock_release(queue)
                queue.close()


@contextlib.contextmanager
def locked(target: Path, *, deadline: float = DEFAULT_DEADLINE) -> Iterator[FileLock]:
    with FileLock(target, deadline=deadline) as lock:
        yield lock


def ensure_file(path: Path, initial: bytes) -> bool:
    """Create `path` with `initial` unless it exists (`wx`, as the CLI does); True if it was created."""
    return safefs.create_new(path, initial)
