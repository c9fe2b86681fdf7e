"""The file a task's output is left in for the program, one per task as Claude Code leaves them (a subagent's answer, a
stopped command's output): `<tmp>/agentteams-<uid>/<session>/tasks/<id>.output`, private, no link followed."""

from __future__ import annotations

import os
from pathlib import Path


def write_task_output(session_id: str, task_id: str, text: str) -> Path:
    """Leave `text` as the task's output; its path (named to the program even when the write failed: the text is in
    the tool's result too)."""
    import tempfile  # with shutil: loaded by a task's output, not by every session's start

    from agentteams.store.fs import safe_paths
    from agentteams.store.fs.atomic_json import atomic_write_bytes

    where = Path(tempfile.gettempdir()) / f"agentteams-{os.getuid()}" / session_id / "tasks"
    path = where / f"{task_id}.output"
    try:
        safe_paths.make_dir(where, parents=True)
        atomic_write_bytes(path, text.encode("utf-8"))
    except OSError:
        pass
    return path
