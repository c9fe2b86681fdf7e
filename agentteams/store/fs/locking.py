"""Claude Code's lock protocol (proper-lockfile: `mkdir <target>.lock`), fronted by an OS queue (lock_queue.py)
that our processes sleep in, with a deadline, before taking the mkdir lock, which also excludes real `claude`.
A holder replaces files only while the lock dir is still the one it made (`check_held`, `run_locked`)."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar

from agentteams import diagnostics
from agentteams.errors import LockLostError, NotFoundError
from agentteams.store.fs import lock_queue, safe_paths
from agentteams.store.fs.lock_queue import (
    STALE_SECONDS,
    Queued,
    flock_exclusive,
    flock_release,
    flock_shared,
    portalocker,
    stale,
    timeout_error,
    wait_queue,
)

__all__ = ["STALE_SECONDS", "flock_exclusive", "flock_release", "flock_shared", "portalocker"]

REFRESH_SECONDS = 5.0
DEFAULT_DEADLINE = 15.0  # beyond STALE_SECONDS, so a stale lock is always broken before we give up
MIN_BACKOFF = 0.005
MAX_BACKOFF = 0.1
# The sticky bit marks a lock dir as made by the holder of our kernel queue from the instant mkdir creates it
# (the umask leaves it alone, proper-lockfile never sets it), so one left by a holder killed before writing
# its record is still recognised. A waiter that bypassed a stuck queue holder makes a plain 0777 dir.
LOCK_DIR_MODE = 0o1700  # private to the user (issue 14): a real `claude` of the same user removes it all the same
BYPASS_DIR_MODE = 0o700
T = TypeVar("T")


_portalocker = portalocker  # the name the workers and the benchmark warm


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
                # holding none, it looks every REFRESH_SECONDS (not every second): a lock taken meanwhile is seen
                # within that, then every second, so it is refreshed by ~REFRESH_SECONDS + 1 s, short of STALE_SECONDS
                self._cond.wait(timeout=1.0 if self._held else REFRESH_SECONDS)
                due = [lk for lk in self._held.values() if time.monotonic() - lk.touched >= REFRESH_SECONDS]
            for lk in due:
                lk.refresh()


_REFRESHER = _Refresher()


class FileLock:
    """Exclusive lock on `target`, compatible with Claude Code's proper-lockfile usage.

    While held it keeps the lock dir open: that pins its inode, which is how `still_held` tells our dir from
    one another process made after breaking ours (the same path, never the same inode while ours is open).
    """

    def __init__(self, target: Path, *, deadline: float = DEFAULT_DEADLINE) -> None:
        self.target = target
        self.lock_dir = lock_dir_for(target)
        self.deadline = deadline
        self.touched = 0.0
        self._queue: IO[bytes] | None = None  # the flocked queue file, unless we bypassed a stuck holder
        self._dir_fd: int | None = None
        self._dir_id: tuple[int, int] | None = None
        self._refresh_mutex = threading.Lock()
        self._stack: list[FileLock] = []  # the acquiring thread's held locks (for `check_held`)

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
        start = time.monotonic()
        try:
            queue = safe_paths.open_file(queue_file_for(self.target), "a+b")  # held until release(); never a link
        except FileNotFoundError as e:
            raise NotFoundError(f"cannot lock {self.target}: its directory does not exist") from e
        try:
            how = wait_queue(queue, start, self.deadline, self.lock_dir, lambda: self._holder_stuck(queue))
            if how == "queued" and unless is not None and unless():
                _close_queue(queue, how)
                return False
            self._take_dir(queue, how, start)
        except BaseException:
            _close_queue(queue, "queued")
            raise
        if how == "bypass":
            diagnostics.debug("lock %s: our queue's holder is stuck; took the stale lock dir past it", self.lock_dir)
            queue.close()
        self._held(queue if how == "queued" else None)
        return True

    def try_acquire(self) -> bool:
        """Take the lock only if it is free now, nobody of ours queued for it and no lock dir in the way (a real
        `claude`'s, a dead holder's): True once held; False at once otherwise (the caller then waits its turn)."""
        try:
            queue = safe_paths.open_file(queue_file_for(self.target), "a+b")  # held until release(); never a link
        except FileNotFoundError as e:
            raise NotFoundError(f"cannot lock {self.target}: its directory does not exist") from e
        try:
            if lock_queue.try_exclusive(queue):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(self.lock_dir, LOCK_DIR_MODE)
                    if self._open_dir(queue):
                        self._held(queue)
                        return True
        except FileNotFoundError as e:
            _close_queue(queue, "queued")
            raise NotFoundError(f"cannot lock {self.target}: its directory does not exist") from e
        except BaseException:
            _close_queue(queue, "queued")
            raise
        _close_queue(queue, "queued")
        return False

    def _held(self, queue: IO[bytes] | None) -> None:
        self._queue = queue
        self.touched = time.monotonic()
        _REFRESHER.add(self)
        self._stack = _held_stack()
        self._stack.append(self)

    def _holder_stuck(self, queue: IO[bytes]) -> bool:
        """Whether the queue's holder has gone STALE_SECONDS without refreshing: its lock dir, or (once that
        was broken and released by another) the record of it the holder keeps in the queue file."""
        if stale(self.lock_dir):
            return True
        record = _Record.decode(os.pread(queue.fileno(), 128, 0))
        return record is not None and time.time_ns() - record.mtime_ns > lock_queue.STALE_SECONDS * 1e9

    def _take_dir(self, queue: IO[bytes], how: Queued, start: float) -> None:
        backoff = MIN_BACKOFF
        while True:
            try:
                os.mkdir(self.lock_dir, LOCK_DIR_MODE if how == "queued" else BYPASS_DIR_MODE)
            except FileExistsError:
                if self._break_if_dead(queue if how == "queued" else None):
                    continue
            except FileNotFoundError as e:
                raise NotFoundError(f"cannot lock {self.target}: its directory does not exist") from e
            else:
                if self._open_dir(queue if how == "queued" else None):
                    return
                continue
            if time.monotonic() - start > self.deadline:
                raise timeout_error(self.deadline, self.lock_dir)
            time.sleep(backoff)
            backoff = min(MAX_BACKOFF, backoff * 2)

    def _open_dir(self, queue: IO[bytes] | None) -> bool:
        """Pin the lock dir we just made; False if it is already gone (then the caller tries again)."""
        try:
            fd = os.open(self.lock_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return False
        st = os.fstat(fd)
        self._dir_fd, self._dir_id = fd, (st.st_dev, st.st_ino)
        if queue is not None:
            self._write_record(queue, _Record(st.st_ino, st.st_mtime_ns))
        return True

    def _break_if_dead(self, queue: IO[bytes] | None) -> bool:
        """Remove the lock dir if its holder is gone; True when the caller should retry at once.

        `queue` is the queue file when we hold its flock, None when we bypassed a stuck holder.
        """
        try:
            st = os.lstat(self.lock_dir)
        except FileNotFoundError:
            return True
        if stat.S_ISLNK(st.st_mode):
            raise safe_paths.refused(self.lock_dir)
        orphan = False
        if queue is not None:
            queue.seek(0)
            record = _Record.decode(queue.read(128))
            # We hold the queue lock, so a lock dir made by a queue holder (sticky bit), or one a record
            # left in the queue file names, was left by a holder that died before releasing; a live holder
            # always removes both first. A waiter that bypassed a stuck holder makes a plain dir.
            ours = bool(st.st_mode & stat.S_ISVTX)
            orphan = ours or (record is not None and (record.ino, record.mtime_ns) == (st.st_ino, st.st_mtime_ns))
        if not (orphan or time.time() - st.st_mtime > STALE_SECONDS):
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

    def still_held(self) -> bool:
        """Whether the lock dir at its path is still the one we made (no one broke it as stale)."""
        if self._dir_id is None:
            return False
        try:
            st = os.lstat(self.lock_dir)
        except FileNotFoundError:
            return False
        return (st.st_dev, st.st_ino) == self._dir_id

    def ensure_held(self) -> None:
        """Raise LockLostError unless we still hold the lock: called before a write that replaces a file."""
        if not self.still_held():
            raise LockLostError(
                f"lock {self.lock_dir} was broken while we held it (this process was stopped for over "
                f"{STALE_SECONDS:.0f}s); nothing was written",
                str(self.lock_dir),
            )

    def refresh(self) -> None:
        """Touch the lock dir so other processes do not take it for stale (proper-lockfile's `update`)."""
        with self._refresh_mutex:
            if self._dir_fd is None or not self.still_held():
                return  # never keep fresh a dir another process made after breaking ours
            os.utime(self._dir_fd)
            if self._queue is not None:
                st = os.fstat(self._dir_fd)
                self._write_record(self._queue, _Record(st.st_ino, st.st_mtime_ns))
            self.touched = time.monotonic()

    def release(self) -> None:
        _REFRESHER.remove(self)
        with contextlib.suppress(ValueError):
            self._stack.remove(self)
        with self._refresh_mutex:
            queue, self._queue = self._queue, None
            fd, self._dir_fd = self._dir_fd, None
            if fd is None:
                return
            try:
                if self.still_held():
                    with contextlib.suppress(FileNotFoundError):
                        os.rmdir(self.lock_dir)
            finally:
                os.close(fd)
                self._dir_id = None
                if queue is not None:
                    self._write_record(queue, None)
                    _close_queue(queue, "queued")


def _close_queue(queue: IO[bytes], how: Queued) -> None:
    try:
        if how == "queued":
            flock_release(queue)  # unlocking a file we never locked is harmless
    finally:
        queue.close()


_HELD = threading.local()


def _held_stack() -> list[FileLock]:
    stack: list[FileLock] | None = getattr(_HELD, "stack", None)
    if stack is None:
        stack = _HELD.stack = []
    return stack


def check_held() -> None:
    """Before replacing a file: raise LockLostError if the innermost lock this thread holds was broken."""
    stack = _held_stack()
    if stack:
        stack[-1].ensure_held()


@contextlib.contextmanager
def locked(target: Path, *, deadline: float = DEFAULT_DEADLINE) -> Iterator[FileLock]:
    with FileLock(target, deadline=deadline) as lock:
        yield lock


def run_locked(target: Path, work: Callable[[], T], *, deadline: float = DEFAULT_DEADLINE) -> T:
    """`work()` under the lock on `target`: a read-modify-write. If the lock is broken while held (we were
    stopped past its staleness and another writer took it), the writes were refused, so `work` runs again on
    fresh data once the lock is ours again: no other writer's change is overwritten."""
    while True:
        lock = FileLock(target, deadline=deadline)
        with lock:
            try:
                return work()
            except LockLostError as e:
                if e.lock_dir != str(lock.lock_dir):
                    raise  # an outer lock was lost: its own redo handles it
                lost = str(e)
        diagnostics.warning("%s; redoing the change on fresh data", lost)


def ensure_file(path: Path, initial: bytes) -> bool:
    """Create `path` with `initial` unless it exists (`wx`, as the CLI does); True if it was created."""
    return safe_paths.create_new(path, initial)
