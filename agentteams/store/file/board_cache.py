"""A team's task board for read-only views (`status`, `watch`): the fields a view shows, read from the task files
lean (no record built) and kept per file with its size, mtime and inode in our own copy beside the config root's
other state, so a board of 10 000 tasks costs a stat per file and one read, not 10 000 parses."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from stat import S_ISREG
from typing import Any

from agentteams import diagnostics
from agentteams.store.file.task_files import task_ids
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_bytes
from agentteams.store.paths import Layout
from agentteams.store.records import TASK_STATUSES, Task
from agentteams.store.values import BoardTask

VERSION = 2  # rows in id order (1: a dict by file name, a third slower to load)
# A file changed this close to our reading may change again within the same tick of the kernel's coarse clock and
# keep its size: its copy would then look current while it is not. Such a file is read every time until it is older
# (git's "racily clean" entries, the same answer).
RACY_NS = 2_000_000_000

Parse = Callable[[str, bytes, str], Task | None]  # the store's full parse: quarantines a corrupt file, says why
# the C scanner json.loads ends in, called straight (its layers above cost as much again, 10 000 times a first look)
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
Row = list[Any]  # [file name, mtime_ns, size, inode, id, subject, status, owner, blocked_by, blocks]
ROW_LEN = 10


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


def _in_order(listed: list[str], kept: list[Row]) -> list[Row]:
    """The task files in id order, each as its copy's row or as `[name]` (none kept): the copy's own order when the
    listing has the very same task files (most looks: no sort of 10 000 ids), else the listing's, sorted."""
    if not kept:
        return [[f"{i}.json"] for i in task_ids(listed)]
    names = set(listed)
    kept_names = [r[0] for r in kept]
    if names.issuperset(kept_names):
        names.difference_update(kept_names)
        if not task_ids(list(names)):  # nothing else but locks and the id watermark
            return kept
    by_name = {r[0]: r for r in kept}
    return [by_name.get(name) or [name] for name in (f"{i}.json" for i in task_ids(listed))]


def _walk(dir_fd: int, where: str, kept: list[Row], parse: Parse) -> tuple[list[BoardTask], list[Row]]:
    board: list[BoardTask] = []
    fresh: list[Row] = []
    racy_after = time.time_ns() - RACY_NS
    stat, task_of = os.stat, BoardTask._make  # a loop of 10 000: no attribute lookups in it
    for row in _in_order(os.listdir(dir_fd), kept):
        name = row[0]
        if len(row) == ROW_LEN:
            try:
                st = stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:  # deleted since the listing
                continue
            if st.st_mtime_ns == row[1] and st.st_size == row[2] and st.st_ino == row[3] and S_ISREG(st.st_mode):
                fresh.append(row)
                board.append(task_of(row[4:]))
                continue
        got = safe_paths.read_at_stat(dir_fd, name)  # a link is refused here, as every read of ours refuses it
        if got is None:
            continue
        raw, st = got
        task_id = name[:-5]
        task = _lean(task_id, raw)
        if task is None:  # not plainly a task: the full parse decides (and quarantines a corrupt file)
            full = parse(task_id, raw, f"{where}/{name}")
            task = None if full is None else BoardTask.of(full)
        if task is None:
            continue
        board.append(task)
        if st.st_mtime_ns <= racy_after and S_ISREG(st.st_mode):
            fresh.append([name, st.st_mtime_ns, st.st_size, st.st_ino, *task])
    return board, fresh


def _lean(task_id: str, raw: bytes) -> BoardTask | None:
    """The view's fields of a well-formed task file, or None for anything the full parse must judge."""
    try:
        text = raw.decode()  # strict UTF-8: anything else is the full parse's to judge
        obj, end = _scan(text, 0)
    except (ValueError, StopIteration):  # UnicodeDecodeError, JSONDecodeError, or no JSON value at 0
        return None
    if type(obj) is not dict or (end != len(text) and not text[end:].isspace()):
        return None
    subject, status, owner = obj.get("subject"), obj.get("status", "pending"), obj.get("owner")
    blocked_by, blocks = obj.get("blockedBy"), obj.get("blocks")
    if (
        obj.get("id") != task_id or type(subject) is not str or status not in TASK_STATUSES
        or not (owner is None or type(owner) is str)
        or type(blocked_by) is not list or type(blocks) is not list
        or (blocked_by and not all(type(x) is str for x in blocked_by))
        or (blocks and not all(type(x) is str for x in blocks))
    ):  # fmt: skip
        return None
    return BoardTask(task_id, subject, status, owner, blocked_by, blocks)


def _load(layout: Layout, team: str, dir_ino: int) -> list[Row]:
    """Our copy for this very task directory, or nothing (none yet, another version's, unreadable)."""
    try:
        raw = safe_paths.read_bytes(layout.board_copy_file(team))
        doc = json.loads(raw) if raw is not None else None
    except (OSError, ValueError):
        return []
    if not isinstance(doc, dict) or doc.get("version") != VERSION or doc.get("dir_inode") != dir_ino:
        return []
    rows = doc.get("rows")
    if not isinstance(rows, list):
        return []
    return [r for r in rows if type(r) is list and len(r) == ROW_LEN and type(r[0]) is str]


def _save(layout: Layout, team: str, dir_ino: int, rows: list[Row]) -> None:
    """Best effort: a view never fails for its copy (a read-only or full disk leaves it as it was)."""
    path = layout.board_copy_file(team)
    data = json.dumps({"version": VERSION, "dir_inode": dir_ino, "rows": rows}, separators=(",", ":"))
    try:
        safe_paths.make_dir(path.parent, parents=True)
        atomic_write_bytes(path, data.encode(), durable=False)  # a copy lost in a crash is only read again
    except OSError as e:
        diagnostics.debug("task board copy %s not written: %s", path, e)
