"""Claude Code's own inbox algorithm (2.1.197), reimplemented as the baseline and as a foreign peer."""

# A writer: create the inbox with `wx` as `[]`; `mkdir <inbox>.lock` with 10 retries backing off 5..100 ms
# (a lock dir older than 10 s is stale and removed); read, parse, append, write `<inbox>.tmp.<hex>`,
# rename; `rmdir` the lock. After its retries a send fails: that message is lost. A pruner removes the
# messages it delivered, as the current CLI does instead of marking them read.

from __future__ import annotations

import json
import os
import secrets
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

RETRIES = 10
MIN_TIMEOUT = 0.005
MAX_TIMEOUT = 0.1
STALE = 10.0


class LockFailed(Exception):
    """The CLI's send gives up after its retries (its message is lost)."""


def _acquire(lock_dir: Path) -> None:
    for attempt in range(RETRIES + 1):
        try:
            os.mkdir(lock_dir)
            return
        except FileExistsError:
            try:
                if time.time() - os.stat(lock_dir).st_mtime > STALE:
                    os.rmdir(lock_dir)
                    continue
            except FileNotFoundError:
                continue
        if attempt < RETRIES:
            time.sleep(min(MAX_TIMEOUT, MIN_TIMEOUT * 2**attempt))
    raise LockFailed(str(lock_dir))


def _write(path: Path, data: Any) -> None:
    tmp = path.with_name(f"{path.name}.tmp.{secrets.token_hex(4)}")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    os.rename(tmp, path)


def locked_update(inbox: Path, change: Callable[[Any], Any]) -> None:
    try:
        fd = os.open(inbox, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"[]")
        os.close(fd)
    except FileExistsError:
        pass
    lock_dir = inbox.with_name(inbox.name + ".lock")
    _acquire(lock_dir)
    try:
        try:
            current = json.loads(inbox.read_text(encoding="utf-8") or "[]")
        except ValueError:
            current = []
        _write(inbox, change(current))
    finally:
        os.rmdir(lock_dir)


def envelope(sender: str, text: str, color: str | None = None) -> dict[str, Any]:
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
    env: dict[str, Any] = {"from": sender, "text": text, "timestamp": stamp}
    if color:
        env["color"] = color
    env.update({"msgV": 1, "msg_id": str(uuid.uuid4()), "type": "message", "read": False})
    return env


def send(inbox: Path, sender: str, text: str) -> dict[str, Any]:
    env = envelope(sender, text)
    locked_update(inbox, lambda cur: [*cur, env])
    return env


def prune_delivered(inbox: Path) -> list[dict[str, Any]]:
    """Take every unread message and remove it from the file, as the current CLI's reader does."""
    taken: list[dict[str, Any]] = []

    def change(cur: list[Any]) -> list[Any]:
        taken.extend(m for m in cur if not m.get("read"))
        return [m for m in cur if m.get("read")]

    locked_update(inbox, change)
    return taken
