"""Atomic, crash-safe JSON file I/O in Claude Code's exact format, and quarantine of corrupt files.

Format: `JSON.stringify(x, null, 2)` — indent 2, `": "`, raw non-ASCII, no trailing newline.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentteams import diagnostics
from agentteams.errors import CorruptFileError
from agentteams.store.fs import safe_paths
from agentteams.store.fs.locking import check_held


def dump_json(obj: object) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False)


def dump_compact(obj: object) -> str:
    """`JSON.stringify(x)`: the form protocol messages take inside an envelope's `text`."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def now_iso() -> str:
    """ISO-8601 UTC with milliseconds and `Z`, as JavaScript's `toISOString()`."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def epoch_ms() -> int:
    return time.time_ns() // 1_000_000


def encode(text: str) -> bytes:
    # surrogatepass: a lone surrogate from a model or a peer must not make a message unwritable
    return text.encode("utf-8", "surrogatepass")


def _atomic_write(path: Path, fill: Callable[[int], None], *, durable: bool = True) -> None:
    """Create `<path>.tmp.<8 hex>` in the same directory, let `fill` write it, fsync (when `durable`), rename over
    `path`.

    Under a lock, the rename happens only while the lock is still ours (else LockLostError, nothing replaced).
    """
    tmp = path.with_name(f"{path.name}.tmp.{os.urandom(4).hex()}")
    fd = safe_paths.open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)  # 0600; renaming over a link replaces the link
    try:
        try:
            fill(fd)
            diagnostics.stamp("filled")
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        check_held()
        diagnostics.stamp("fsynced")
        os.replace(tmp, path)
        diagnostics.stamp("renamed")
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data`, atomically and (unless told otherwise: a cache) durably."""
    _atomic_write(path, lambda fd: safe_paths.write_all(fd, data), durable=durable)


def atomic_write_spliced(path: Path, keep: int, tail: bytes) -> None:
    """Replace `path` with its first `keep` bytes plus `tail`; the kernel copies the kept part."""

    def fill(fd: int) -> None:
        with safe_paths.open_file(path, "rb") as src:
            copied = 0
            while copied < keep:
                n = os.copy_file_range(src.fileno(), fd, keep - copied, copied)
                if n == 0:
                    raise OSError(f"{path} shrank while being copied")
                copied += n
        safe_paths.write_all(fd, tail)

    _atomic_write(path, fill)


def atomic_write_json(path: Path, obj: object) -> None:
    atomic_write_bytes(path, encode(dump_json(obj)))


def json_object(raw: bytes | str | None) -> dict[str, Any] | None:
    """`raw` parsed when it holds a JSON object; None when it is absent, not JSON, or another JSON value."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def parse_json_bytes(raw: bytes, path: Path | str) -> Any:
    """Parse `raw` read from `path`; raises CorruptFileError (not moved) when it is not JSON."""
    try:
        return json.loads(raw.decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptFileError(f"{path} is not valid JSON ({e})") from e


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes (never through a symbolic link); None when it does not exist."""
    return safe_paths.read_bytes(path)


def _aside_names(path: Path) -> Iterator[Path]:
    """`<name>.corrupt-<timestamp>`, then `-2`, `-3`, ...: where a corrupt file, or part of one, is kept."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    yield path.with_name(f"{path.name}.corrupt-{stamp}")
    for n in itertools.count(2):
        yield path.with_name(f"{path.name}.corrupt-{stamp}-{n}")


def quarantine(path: Path) -> Path:
    """Move a corrupt file aside to `<name>.corrupt-<timestamp>` and return where it went."""
    check_held()  # under a lock that was broken, `path` may be another writer's good file
    aside = next(p for p in _aside_names(path) if not p.exists())
    os.replace(path, aside)
    return aside


def write_aside(path: Path, data: bytes) -> Path:
    """Keep `data` (a corrupt part of `path`) durably in a new `<name>.corrupt-<timestamp>` file; where it went."""
    for aside in _aside_names(path):
        try:
            fd = safe_paths.open_fd(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL)  # 0600, never through a link
        except FileExistsError:
            continue
        try:
            safe_paths.write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        return aside
    raise AssertionError("unreachable: the names never run out")
