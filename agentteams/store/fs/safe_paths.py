"""Opening files and making directories under the config root: never through a symbolic link, and private to the
user (files 0600, directories 0700). Every file of the store is opened here."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO, Literal

from agentteams.errors import UnsafePathError

FILE_MODE = 0o600
DIR_MODE = 0o700
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_NOATIME = getattr(os, "O_NOATIME", 0)
_FLAGS = {"rb": os.O_RDONLY, "ab": os.O_WRONLY | os.O_APPEND | os.O_CREAT, "a+b": os.O_RDWR | os.O_APPEND | os.O_CREAT}


def refused(path: Path | str) -> UnsafePathError:
    return UnsafePathError(f"refusing {path}: it is a symbolic link, and the store never follows one")


def check_dirs(root: str, directory: str) -> None:
    """Refuse when a directory between `root` (excluded: it may be a link) and `directory` (included) is a
    symbolic link; both normalised absolute paths. Checking stops at the first one that does not exist yet."""
    end = len(root.rstrip(os.sep))
    while end < len(directory):
        end = directory.find(os.sep, end + 1)
        end = len(directory) if end < 0 else end
        try:
            st = os.lstat(directory[:end])
        except (FileNotFoundError, NotADirectoryError):
            return
        if stat.S_ISLNK(st.st_mode):
            raise refused(directory[:end])


def open_fd(path: Path, flags: int, mode: int = FILE_MODE) -> int:
    """`os.open` of `path`, never following it if a symbolic link. One that may create the file goes through its
    directory opened without following it either, so nothing is created outside even if a directory is swapped
    for a link after `Layout` checked it; a plain open relies on that check (and saves the directory's open)."""
    if not flags & os.O_CREAT:
        try:
            return _open_noatime(path, flags | _NOFOLLOW) if flags == os.O_RDONLY else os.open(path, flags | _NOFOLLOW)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise refused(path) from None
            raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path.parent):
            raise refused(path.parent) from None
        raise
    try:
        return os.open(path.name, flags | _NOFOLLOW, mode, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise refused(path) from None
        raise
    finally:
        os.close(dir_fd)


def _open_noatime(path: Path, flags: int) -> int:
    """A read that leaves the access time alone: under `relatime` the first read of a file just replaced (an inbox a
    sender renamed into place) would otherwise write its inode, a journal update that can wait behind another
    process's fsync. Only the file's owner may ask this; for anyone else it is a plain read."""
    try:
        return os.open(path, flags | _NOATIME)
    except PermissionError:
        return os.open(path, flags)


def open_file(path: Path, how: Literal["rb", "ab", "a+b"]) -> IO[bytes]:
    return os.fdopen(open_fd(path, _FLAGS[how]), how)


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes; None when it does not exist."""
    try:
        fd = open_fd(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read()


def open_dir(path: Path) -> int | None:
    """A descriptor of the directory `path` (opened without following a link: refused if it is one), for reading
    many of its files with `read_at` after one check of the path; None when it does not exist."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
            raise refused(path) from None
        raise


def read_at(dir_fd: int, name: str) -> bytes | None:
    """The bytes of the file `name` in the directory open as `dir_fd`, never through a link; None when it does not
    exist. No path is built or checked: a caller reading a whole directory pays for its check once."""
    fd = _open_at(dir_fd, name)
    if fd is None:
        return None
    try:
        return _read_rest(fd, [])
    finally:
        os.close(fd)


def read_at_stat(dir_fd: int, name: str) -> tuple[bytes, os.stat_result] | None:
    """`read_at`, with the file's stat as it was opened (taken before the read: a change while reading shows as a
    newer stat next time); three calls where a stat and a read took five."""
    fd = _open_at(dir_fd, name)
    if fd is None:
        return None
    try:
        st = os.fstat(fd)
        first = os.read(fd, st.st_size + 1)
        if len(first) == st.st_size:  # the whole file as stat saw it, and its end: no second read
            return first, st
        return _read_rest(fd, [first]), st  # it changed meanwhile: to its end, as read_at
    finally:
        os.close(fd)


def _read_rest(fd: int, chunks: list[bytes]) -> bytes:
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _open_at(dir_fd: int, name: str) -> int | None:
    flags = os.O_RDONLY | _NOFOLLOW
    try:
        try:
            return os.open(name, flags | _NOATIME, dir_fd=dir_fd)
        except PermissionError:  # O_NOATIME is for the file's owner only
            return os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise refused(name) from None
        raise


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def append_bytes(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Append `data` to `path` (created 0600), durably unless told otherwise."""
    fd = open_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        write_all(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def sync_dir(path: Path) -> None:
    """fsync a directory: the renames and removals made in it so far survive a power cut."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_new(path: Path, data: bytes) -> bool:
    """Create `path` with `data` unless it (or a link in its place) exists; True if it was created."""
    try:
        fd = open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return False
    try:
        write_all(fd, data)
    finally:
        os.close(fd)
    return True


def make_dir(path: Path, *, parents: bool = False) -> None:
    """`mkdir -p`-like, each new directory 0700; an existing one that is a symbolic link is refused."""
    try:
        os.mkdir(path, DIR_MODE)
        return
    except FileNotFoundError:
        if not parents or path.parent == path:
            raise
    except FileExistsError:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise refused(path) from None
        return
    make_dir(path.parent, parents=True)
    make_dir(path)
