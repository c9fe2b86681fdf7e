"""Task lists whose team is gone, as `cleanup` reports them: said, never removed (Claude Code keeps a deleted team's
tasks, and a new team of that name never takes them: it gets another name); task files read without the store."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentteams.errors import UnsafePathError
from agentteams.store.fs import safe_paths
from agentteams.store.paths import Layout

DONE = ("completed", "deleted")  # task statuses that leave nothing to do


def orphan_lists(layout: Layout, only: str | None, has_team: Callable[[str], bool]) -> list[str]:
    """One note per task list without a team (only `only`'s, when given)."""
    if not layout.tasks_root.is_dir():
        return []
    notes = []
    for d in sorted(layout.tasks_root.iterdir()):
        if (only and d.name != only) or not d.is_dir() or d.is_symlink() or has_team(d.name):
            continue
        statuses = [task_doc(f).get("status") for f in d.glob("*.json")]
        if statuses:
            left = sum(s not in DONE for s in statuses)
            notes.append(f"task list {d} has no team: {len(statuses)} tasks, {left} not done (kept, as claude keeps "
                         f"them; remove the directory when they are of no more use)")  # fmt: skip
    return notes


def task_doc(path: Path) -> dict[str, Any]:
    """A task file's object read without the store (a dry run must not quarantine any); {} when unreadable."""
    with contextlib.suppress(OSError, ValueError, UnsafePathError):
        task = json.loads(safe_paths.read_bytes(path) or b"null")
        if isinstance(task, dict):
            return task
    return {}
