"""Large task boards for tests: task files written as Claude Code writes them (no store call per task: a board of
thousands is made in a blink), and a count of the task-file reads the file store makes meanwhile."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import dump_json
from agentteams.store.paths import Layout

_TASK_FILE = re.compile(r"([0-9]+)\.json")


def write_board(layout: Layout, team: str, docs: list[dict[str, Any]]) -> None:
    """One task file per doc (`id` numbered from 1 in order, `blocks`/`blockedBy` default empty)."""
    task_dir = layout.task_dir(team)
    task_dir.mkdir(parents=True, exist_ok=True)
    for i, doc in enumerate(docs, 1):
        full = {"id": str(i), "description": "", "status": "pending", "blocks": [], "blockedBy": [], **doc}
        (task_dir / f"{i}.json").write_text(dump_json(full))


@contextmanager
def counting_task_reads() -> Iterator[Counter[str]]:
    """Task id -> how many times its file was read, through every read function of the store that opens a file
    (a path, or a name in a directory it holds open)."""
    reads: Counter[str] = Counter()

    def counted(real: Callable[..., Any]) -> Callable[..., Any]:
        def read(*args: Any) -> Any:
            if found := _TASK_FILE.fullmatch(Path(str(args[-1])).name):
                reads[found.group(1)] += 1
            return real(*args)

        return read

    readers = ("read_bytes", "read_at", "read_at_stat")
    saved = {name: getattr(safe_paths, name) for name in readers if hasattr(safe_paths, name)}
    for name, real in saved.items():
        setattr(safe_paths, name, counted(real))
    try:
        yield reads
    finally:
        for name, real in saved.items():
            setattr(safe_paths, name, real)
