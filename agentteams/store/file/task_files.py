"""A team's task files as files: their ids, the id watermark, the key order the team's generation writes, the whole
list read through the task dir's descriptor, and the pick of the next claimable task."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TypeVar

from agentteams import diagnostics
from agentteams.errors import CorruptFileError
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_bytes, parse_json_bytes, read_bytes
from agentteams.store.paths import Layout
from agentteams.store.records import LEAD_PROCESS, Task
from agentteams.store.values import BoardTask


def task_ids(names: Sequence[str]) -> list[int]:
    """The ids of a task dir's files (`<n>.json`), in numeric order."""
    return sorted(int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isascii() and n[:-5].isdigit())


def ids_on_disk(layout: Layout, team: str) -> list[int]:
    d = layout.task_dir(team)
    return task_ids(os.listdir(d)) if d.is_dir() else []


def read_all(layout: Layout, team: str) -> Iterator[tuple[str, bytes, str]]:
    """(id, bytes, where) of every task file in id order, each read once through the task dir's descriptor: the
    path is checked once for the whole list, not per file (on a board of 10 000 that check was most of the time)."""
    d = layout.task_dir(team)
    dir_fd = safe_paths.open_dir(d)
    if dir_fd is None:
        return
    try:
        for i in task_ids(os.listdir(dir_fd)):
            raw = safe_paths.read_at(dir_fd, f"{i}.json")
            if raw is not None:  # deleted since the listing
                yield str(i), raw, f"{d}/{i}.json"
    finally:
        os.close(dir_fd)


def still_open(layout: Layout, team: str, task_id: str) -> bool:
    """Whether the task `task_id` is there and unresolved, read without its lock, as a listing reads it (one that is
    missing, corrupt or misnamed blocks nothing)."""
    if not task_id.isascii() or not task_id.isdigit():
        return False
    raw = read_bytes(layout.task_file(team, task_id))
    try:
        return raw is not None and not Task.from_json(parse_json_bytes(raw, task_id), task_id).resolved
    except CorruptFileError:
        return False


Listed = TypeVar("Listed", Task, BoardTask)  # a record, or a view's lean task (a claim's look)


def first_claimable(tasks: Sequence[Listed]) -> Listed | None:
    """Lowest-id pending, unowned task whose blockers are all resolved."""
    open_ids = {t.id for t in tasks if not t.resolved}
    for t in tasks:
        if t.status == "pending" and not t.owner and not any(d in open_ids for d in t.blocked_by):
            return t
    return None


def watermark(layout: Layout, team: str) -> int:
    path = layout.highwatermark_file(team)
    raw = read_bytes(path)
    try:
        return int(raw.strip()) if raw else 0
    except ValueError:
        diagnostics.warning("%s is not a number; ids continue after the highest task file", path)
        return 0


def raise_watermark(layout: Layout, team: str, value: int) -> None:
    if value > watermark(layout, team):
        atomic_write_bytes(layout.highwatermark_file(team), str(value).encode())


def schema_order(layout: Layout, team: str) -> bool:
    """How this team's generation writes tasks: in schema order (2.1.197, or no readable config), or keeping each
    file's key order (2.1.330: its config has `leadProcess`). Only top-level keys are looked at."""
    path = layout.config_file(team)
    raw = read_bytes(path)
    try:
        config = parse_json_bytes(raw, path) if raw else None
    except CorruptFileError:
        return True  # the team store reports a damaged config; a task write must not fail on it
    return not (isinstance(config, dict) and LEAD_PROCESS in config)
