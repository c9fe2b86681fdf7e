"""Instant wake-up on file changes: inotify on the files' directories, a stat poll only as the fallback.

The one owner of the `inotify_simple` dependency; it is imported only when a watcher is built.
"""

from __future__ import annotations

import errno
import math
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Protocol

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

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a watched file changed (True) or `timeout` seconds passed (False); None: no limit."""
        if self._inotify is None and self.mode == "inotify":
            raise AgentTeamsError("the file watcher is closed")
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        if self.mode == "inotify":
            return self._wait_inotify(deadline)
        return self._wait_poll(deadline)

    def _wait_inotify(self, deadline: float | None) -> bool:
        while True:
            if deadline is None:
                ms: int | None = None
            else:
                ms = max(0, math.ceil((deadline - time.monotonic()) * 1000))
            changed = False
            for ev in self._inotify.read(timeout=ms):  # drains everything queued, so nothing is reported twice
                if ev.mask & (_DIR_GONE | _IN_Q_OVERFLOW) or (
                    ev.mask & _NAME_EVENTS and (ev.wd in self._any or ev.name in self._names.get(ev.wd, ()))
                ):
                    changed = True
            if changed:
                return True
            if ms == 0:
                return False

    def _wait_poll(self, deadline: float | None) -> bool:
        while True:
            stamps = self._poll_stamps()
            if stamps != self._stamps:
                self._stamps = stamps
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
    False once stopped or when the time is up."""
    for _ in range(slices):
        if stop.is_set():
            return False
        if waiter.wait(slice_s):
            return True
    return False
