"""Failing disks for the fault suite: a small tmpfs filled to the last page (ENOSPC), a read-only bind mount
(EROFS), and, where nothing can be mounted, a file-size limit on the writer process (EFBIG), which runs anywhere."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

PAGE = 4096


def _mount(*args: str) -> str | None:
    """None when the mount worked, else why not (the skip reason)."""
    try:
        proc = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=10, check=False)
    except OSError as e:
        return f"no mount command: {e}"
    return None if proc.returncode == 0 else (proc.stderr.strip() or f"mount exited {proc.returncode}")


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=10, check=False)


@contextlib.contextmanager
def small_tmpfs(path: Path, size: int = 256 * 1024) -> Iterator[Path]:
    """A tmpfs of `size` bytes at `path`; the test is skipped, saying why, where this machine cannot mount one."""
    path.mkdir(parents=True, exist_ok=True)
    why = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    if why is not None:
        pytest.skip(f"cannot mount a tmpfs here ({why}); the RLIMIT_FSIZE variant covers the same path")
    try:
        yield path
    finally:
        _umount(path)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """`path` made read-only by a read-only bind mount onto itself (root's chmod would not stop root)."""
    why = _mount("--bind", str(path), str(path))
    if why is None:
        why = _mount("-o", "remount,bind,ro", str(path))
        if why is not None:
            _umount(path)
    if why is not None:
        if os.geteuid() == 0:
            pytest.skip(f"cannot bind-mount {path} read-only here ({why}), and root ignores file modes")
        mode = path.stat().st_mode
        path.chmod(0o500)
        try:
            yield path
        finally:
            path.chmod(mode)
        return
    try:
        yield path
    finally:
        _umount(path)


def fill(fs: Path, leave_pages: int = 0) -> Path:
    """Fill the filesystem at `fs` with one file until it is full, then give back `leave_pages` pages."""
    filler = fs / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        chunk = b"\0" * PAGE
        with contextlib.suppress(OSError):
            while os.write(fd, chunk) == PAGE:
                pass
        size = os.fstat(fd).st_size
        os.ftruncate(fd, max(0, size - size % PAGE - leave_pages * PAGE))
    finally:
        os.close(fd)
    return filler


def file_size_limit(limit: int) -> Callable[[], None]:
    """A preexec_fn: the child may write no byte at an offset beyond `limit` (EFBIG, with SIGXFSZ ignored)."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply
