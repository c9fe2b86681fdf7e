"""A team's task board for read-only views (`status`, `watch`): the fields a view shows, read from the task files
lean (no record built) and kept per file with its size, mtime and inode in our own copy beside the config root's
other state, so a board of 10 000 tasks costs a stat per file and one read, not 10 000 parses."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from typing import Any

from agentteams import diagnostics
from agentteams.store.file.task_files import task_ids
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_bytes
from agentteams.store.paths import Layout
from agentteams.store.records import TASK_STATUSES, Task
from agentteams.store.values import BoardTask

VERSION = 1
# A file changed this close to our reading may change again within the same tick of the kernel's coarse clock and
# keep its size: its copy would then look current while it is not. Such a file is read every time until it is older
# (git's "racily clean" entries, the same answer).
RACY_NS = 2_000_000_000

Parse = Callable[[str, bytes, str], Task | None]  # the store's full parse: quarantines a corrupt file, says why
Entry = list[Any]  # [mtime_ns, size, inode, id, subject, status, owner, blocked_by, blocks]


def read_board(layout: Layout, team: str, parse: Parse) -> list[BoardTask]:
    """Every task of `team` in id order, as a view shows it; a file that is not a plain task goes through `parse`
    (which moves a corrupt one aside and reports it). The copy is rewritten when anything in it changed."""
    d = layout.task_dir(team)
    dir_fd = safe_paths.open_dir(d)
    if dir_fd is None:
        return []
    try:
        dir_ino = os.fstat(dir_fd).st_ino  # a new list of the same name is a new directory: nothing carries over
        kept = _load(layout, team, dir_ino)
        board, fresh = _walk(dir_fd, str(d), kept, parse)
    finally:
        os.close(dir_fd)
    if fresh != kept:
        _save(layout, team, dir_ino, fresh)
    return board


def _walk(dir_fd: int, where: str, kept: dict[str, Entry], parse: Parse) -> tuple[list[BoardTask], dict[str, Entry]]:
    board: list[BoardTask] = []
    fresh: dict[str, Entry] = {}
    now = time.time_ns()
    for i in task_ids(os.listdir(dir_fd)):
        name = f"{i}.json"
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:  # deleted since the listing
            continue
        entry = kept.get(name)
        if entry is not None and entry[:3] == [st.st_mtime_ns, st.st_size, st.st_ino] and stat.S_ISREG(st.st_mode):
            fresh[name] = entry
            board.append(BoardTask(*entry[3:]))
            continue
        raw = safe_paths.read_at(dir_fd, name)  # a link is refused here, as every read of ours refuses it
        if raw is None:
            continue
        row = _lean(str(i), raw)
        if row is None:  # not plainly a task: the full parse decides (and quarantines a corrupt file)
            task = parse(str(i), raw, f"{where}/{name}")
            row = None if task is None else BoardTask.of(task)
        if row is None:
            continue
        board.append(row)
        if now - st.st_mtime_ns >= RACY_NS and stat.S_ISREG(st.st_mode):
            fresh[name] = [st.st_mtime_ns, st.st_size, st.st_ino, *row]
    return board, fresh


def _lean(task_id: str, raw: bytes) -> BoardTask | None:
    """The view's fields of a well-formed task file, or None for anything the full parse must judge."""
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    subject, status, owner = obj.get("subject"), obj.get("status", "pending"), obj.get("owner")
    blocked_by, blocks = obj.get("blockedBy"), obj.get("blocks")
    if (
        obj.get("id") != task_id or type(subject) is not str or status not in TASK_STATUSES
        or not (owner is None or type(owner) is str)
        or type(blocked_by) is not list or type(blocks) is not list
        or not all(type(x) is str for x in blocked_by) or not all(type(x) is str for x in blocks)
    ):  # fmt: skip
        return None
    return BoardTask(task_id, subject, status, owner, blocked_by, blocks)


def _load(layout: Layout, team: str, dir_ino: int) -> dict[str, Entry]:
    """Our copy for this very task directory, or nothing (none yet, another version's, unreadable)."""
    try:
        raw = safe_paths.read_bytes(layout.board_copy_file(team))
        doc = json.loads(raw) if raw is not None else None
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("version") != VERSION or doc.get("dir_inode") != dir_ino:
        return {}
    entries = doc.get("entries")
    if not isinstance(entries, dict):
        return {}
    return {k: e for k, e in entries.items() if isinstance(e, list) and len(e) == 9}


def _save(layout: Layout, team: str, dir_ino: int, entries: dict[str, Entry]) -> None:
    """Best effort: a view never fails for its copy (a read-only or full disk leaves it as it was)."""
    path = layout.board_copy_file(team)
    data = json.dumps({"version": VERSION, "dir_inode": dir_ino, "entries": entries}, separators=(",", ":"))
    try:
        safe_paths.make_dir(path.parent, parents=True)
        atomic_write_bytes(path, data.encode())
    except OSError as e:
        diagnostics.debug("task board copy %s not written: %s", path, e)
