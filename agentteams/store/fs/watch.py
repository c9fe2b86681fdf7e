"""Instant wake-up on file changes: inotify on the files' directories, a stat poll only as the fallback; a flag
(`WakeEvent`) and a process's end (a pidfd) can wake a watcher too, so idle waits need no periodic polls.

The one owner of the `inotify_simple` dependency; it is imported only when a watcher is built.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import select
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Protocol

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError

Mode = Literal["inotify", "poll"]
POLL_INTERVAL = 0.05  # seconds; the fallback only, where inotify is unavailable
ENV_MODE = "AGENTTEAMS_WATCH"  # "poll" forces the fallback

# Inboxes are replaced by rename (IN_MOVED_TO); other writers rewrite in place (IN_CLOSE_WRITE) or create
# (IN_CREATE); removal is a change too. The directory going away, or a queue overflow, also wakes.
_IN_CLOSE_WRITE, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x8, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_Q_OVERFLOW, _IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
_NAME_EVENTS = _IN_CLOSE_WRITE | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
_DIR_GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED
_WATCH_MASK = _NAME_EVENTS | _IN_DELETE_SELF | _IN_MOVE_SELF

Stamp = tuple[int, int, int] | None


class WakeEvent(threading.Event):
    """A threading.Event that also calls its listeners when set: a waiter blocked on something else (a watcher's
    file descriptors) is woken at once, instead of looking at the flag every fraction of a second."""

    def __init__(self) -> None:
        super().__init__()
        self._listeners: list[Callable[[], None]] = []
        self._guard = threading.RLock()  # reentrant: a signal handler may set it while this thread listens

    def set(self) -> None:
        super().set()
        with self._guard:
            listeners = list(self._listeners)
        for wake in listeners:
            wake()

    def listen(self, wake: Callable[[], None]) -> Callable[[], None]:
        """Call `wake` when the flag is set (at once if it already is); returns what stops listening."""
        with self._guard:
            self._listeners.append(wake)
        if self.is_set():
            wake()

        def stop() -> None:
            with self._guard, contextlib.suppress(ValueError):
                self._listeners.remove(wake)

        return stop


def _dir_stamp(path: Path) -> tuple[Stamp, ...]:
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return ()
    return tuple(_stamp(path / n) for n in names)


def _stamp(path: Path) -> Stamp:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class FileWatcher:
    """Wakes when one of `paths`, or any file in one of `dirs`, is created, written, replaced or removed.

    Changes made after construction are never lost: each `wait` reports the ones since the previous
    report. The files need not exist yet; their directories must.
    """

    def __init__(
        self, paths: Iterable[Path], *, dirs: Iterable[Path] = (), mode: Mode | None = None,
        poll_interval: float = POLL_INTERVAL,
    ) -> None:  # fmt: skip
        self.paths = [Path(p) for p in paths]
        self.dirs = [Path(d) for d in dirs]
        if not self.paths and not self.dirs:
            raise AgentTeamsError("nothing to watch: no paths given")
        for d in {p.parent for p in self.paths} | set(self.dirs):
            if not d.is_dir():
                raise AgentTeamsError(f"cannot watch {d}: the directory does not exist")
        self.poll_interval = poll_interval
        self._inotify: Any = None
        self._names: dict[int, set[str]] = {}
        self._any: set[int] = set()  # watches of whole directories
        self._stamps: list[Any] = []
        self._woken = threading.Event()  # wake() was called: the next (or current) wait returns True
        self._wake_fd: int | None = None  # an eventfd beside inotify, made by the first wake-able wait
        wanted = mode or ("poll" if os.environ.get(ENV_MODE, "").strip().lower() == "poll" else "inotify")
        self.mode: Mode = "inotify" if wanted == "inotify" and self._start_inotify() else "poll"
        if self.mode == "poll":
            self._stamps = self._poll_stamps()

    def _poll_stamps(self) -> list[Any]:
        return [*(_stamp(p) for p in self.paths), *(_dir_stamp(d) for d in self.dirs)]

    def _start_inotify(self) -> bool:
        """Watch each directory; False when inotify is unavailable here (the caller then polls)."""
        try:
            import inotify_simple

            _bind_libc(inotify_simple)
            ino = inotify_simple.INotify()
        except (ImportError, OSError, AttributeError):
            return False
        try:
            for p in self.paths:
                wd = ino.add_watch(p.parent, _WATCH_MASK)
                self._names.setdefault(wd, set()).add(p.name)
            for p in self.dirs:
                self._any.add(ino.add_watch(p, _WATCH_MASK))
        except OSError as e:
            ino.close()
            self._names.clear()
            if e.errno in (errno.ENOENT, errno.ENOTDIR):
                raise AgentTeamsError(f"cannot watch {p.parent}: the directory does not exist") from e
            return False  # e.g. ENOSPC: out of inotify watches
        self._inotify = ino
        return True

    def wait(self, timeout: float | None = None, *, fds: Iterable[int] = ()) -> bool:
        """Block until a watched file changed, `wake` was called or one of `fds` (pidfds) became readable (True),
        or `timeout` seconds passed (False); None: no limit."""
        if self._inotify is None and self.mode == "inotify":
            raise AgentTeamsError("the file watcher is closed")
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        if self.mode == "inotify":
            return self._wait_inotify(deadline, fds)
        return self._wait_poll(deadline, fds)

    def wake(self) -> None:
        """Make the current or next `wait` return True at once (from any thread)."""
        self._woken.set()
        fd = self._wake_fd
        if fd is not None:
            with contextlib.suppress(OSError):  # closed meanwhile: the watcher is done waiting
                os.eventfd_write(fd, 1)

    def _wait_inotify(self, deadline: float | None, fds: Iterable[int] = ()) -> bool:
        poller = select.poll()
        poller.register(self._inotify.fileno(), select.POLLIN)
        if self._wake_fd is None and hasattr(os, "eventfd"):
            self._wake_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        if self._wake_fd is not None:
            poller.register(self._wake_fd, select.POLLIN)
        others = set(fds)
        for fd in others:
            poller.register(fd, select.POLLIN)
        while True:
            if self._take_wake():
                return True
            ms = None if deadline is None else max(0, math.ceil((deadline - time.monotonic()) * 1000))
            ready = {fd for fd, _ in poller.poll(ms)}
            if self._inotify.fileno() in ready and self._drain():
                diagnostics.stamp("inotify")
                return True
            if ready & others or self._take_wake():
                return True
            if ms == 0:
                return False

    def _take_wake(self) -> bool:
        if not self._woken.is_set():
            return False
        self._woken.clear()
        if self._wake_fd is not None:
            with contextlib.suppress(BlockingIOError):
                os.eventfd_read(self._wake_fd)
        return True

    def _drain(self) -> bool:
        """Read every queued event (so nothing is reported twice); True if one is about a watched file."""
        changed = False
        for ev in self._inotify.read(timeout=0):
            if ev.mask & (_DIR_GONE | _IN_Q_OVERFLOW) or (
                ev.mask & _NAME_EVENTS and (ev.wd in self._any or ev.name in self._names.get(ev.wd, ()))
            ):
                changed = True
        return changed

    def _wait_poll(self, deadline: float | None, fds: Iterable[int] = ()) -> bool:
        others = list(fds)
        while True:
            stamps = self._poll_stamps()
            if stamps != self._stamps:
                self._stamps = stamps
                return True
            if self._take_wake() or (others and select.select(others, [], [], 0)[0]):
                return True
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return False
            pause = self.poll_interval if deadline is None else min(self.poll_interval, deadline - now)
            time.sleep(pause)

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None
        fd, self._wake_fd = self._wake_fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> FileWatcher:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def wait_for_change(paths: Iterable[Path], timeout: float | None = None) -> bool:
    """Wait for one of `paths` to change from now on; False when `timeout` seconds pass first."""
    with FileWatcher(paths) as watcher:
        return watcher.wait(timeout)


class Waits(Protocol):
    def wait(self, timeout: float | None = None) -> bool: ...


def wait_in_slices(waiter: Waits, stop: threading.Event, slice_s: float, slices: int) -> bool:
    """Wait on a watcher for up to `slices` slices of `slice_s` s, looking at `stop` between them: True on news,
    False once stopped or when the time is up. A `WakeEvent` stop and a `FileWatcher` make it one wait that the
    flag ends at once: an idle agent then wakes only for news or when the time is up."""
    if isinstance(stop, WakeEvent) and isinstance(waiter, FileWatcher):
        unlisten = stop.listen(waiter.wake)
        try:
            return not stop.is_set() and waiter.wait(slice_s * slices) and not stop.is_set()
        finally:
            unlisten()
    for _ in range(slices):
        if stop.is_set():
            return False
        if waiter.wait(slice_s):
            return True
    return False


def interrupted_first(done: threading.Event, interrupt: threading.Event, poll: float) -> bool:
    """Wait until `done` is set; True if `interrupt` was set before it. With two WakeEvents the wait sleeps until one
    of them is set; otherwise it looks at `interrupt` every `poll` seconds."""
    if not (isinstance(done, WakeEvent) and isinstance(interrupt, WakeEvent)):
        while not done.wait(poll):
            if interrupt.is_set():
                return True
        return False
    wake = threading.Event()
    unlisten = [done.listen(wake.set), interrupt.listen(wake.set)]
    try:
        while not done.is_set():
            wake.wait()
            wake.clear()  # before the look: one set after it wakes the next wait
            if interrupt.is_set() and not done.is_set():  # an answer that came first is kept
                return True
        return False
    finally:
        for stop in unlisten:
            stop()


def _bind_libc(module: Any) -> None:
    """Hand inotify_simple the C library this process already has loaded: left to find it, it runs `ldconfig -p` in
    a subprocess (`ctypes.util.find_library`), ~8 ms of every process's first watcher (a teammate's way to work)."""
    if getattr(module, "_libc", False) is None:
        import ctypes

        with contextlib.suppress(OSError):
            libc = ctypes.CDLL(None, use_errno=True)
            if hasattr(libc, "inotify_init1"):
                module._libc = libc
