"""Background sessions' records in Claude Code's layout: `jobs/<id>/state.json` under the config root, one per session
started with `--bg`, ours or the real claude's, so each CLI lists the other's (claude 2.1.332 reads every job dir).
Keys we do not know are kept; a record that cannot be read is skipped with a warning, never removed."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from agentteams import diagnostics
from agentteams.errors import CorruptFileError, InvalidNameError, NotFoundError
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_json, parse_json_bytes, read_bytes
from agentteams.store.paths import Layout

JobState = Literal["working", "idle", "stopped", "failed", "completed"]
LIVE_STATES = ("working", "idle")
OURS = "agentteams"  # our records' `backend`; claude's say "daemon"


def jobs_dir(layout: Layout) -> Path:
    return layout.root / "jobs"


def job_file(layout: Layout, job_id: str) -> Path:
    if not (len(job_id) == 8 and all(c in "0123456789abcdef" for c in job_id)):
        raise InvalidNameError(f"{job_id!r} is not a background session's id (8 hex digits)")
    return jobs_dir(layout) / job_id / "state.json"


def iso_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Job:
    """One background session's record. `raw` is the whole object as read (claude's keys included), written back
    with our changes over it."""

    id: str
    session_id: str
    cwd: str
    intent: str  # the prompt it started with
    state: str
    backend: str
    created_at: str
    name: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ours(self) -> bool:
        return self.backend == OURS

    @property
    def label(self) -> str:
        return self.name or self.intent

    @property
    def started_ms(self) -> int:
        with contextlib.suppress(ValueError):
            return int(datetime.fromisoformat(self.created_at.replace("Z", "+00:00")).timestamp() * 1000)
        return 0

    def to_json(self) -> dict[str, Any]:
        out = dict(self.raw)
        out.update(state=self.state, intent=self.intent, sessionId=self.session_id, daemonShort=self.id, cwd=self.cwd,
                   createdAt=self.created_at, backend=self.backend)  # fmt: skip
        out.setdefault("resumeSessionId", self.session_id)
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_json(cls, job_id: str, obj: dict[str, Any], where: str) -> Job:
        def text(key: str, default: str | None = None) -> str:
            value = obj.get(key, default)
            if not isinstance(value, str):
                raise CorruptFileError(f"{where}: {key!r} must be a string")
            return value

        name = obj.get("name")
        return cls(job_id, text("sessionId"), text("cwd", ""), text("intent", ""), text("state", "failed"),
                   text("backend", ""), text("createdAt", ""), name if isinstance(name, str) else None,
                   raw=obj)  # fmt: skip


def read_job(layout: Layout, job_id: str) -> Job | None:
    """The record, None when there is none; CorruptFileError when it cannot be read as one."""
    path = job_file(layout, job_id)
    raw = read_bytes(path)
    if raw is None:
        return None
    obj = parse_json_bytes(raw, path)
    if not isinstance(obj, dict):
        raise CorruptFileError(f"{path}: expected a JSON object")
    return Job.from_json(job_id, obj, str(path))


def write_job(layout: Layout, job: Job, **changes: Any) -> Job:
    """Write `job` (with `changes` to its fields), stamping `updatedAt`; the job's directory is made if missing."""
    for key, value in changes.items():
        setattr(job, key, value)
    path = job_file(layout, job.id)
    safe_paths.make_dir(path.parent, parents=True)
    job.raw = {**job.to_json(), "updatedAt": iso_now()}
    atomic_write_json(path, job.raw)
    return job


def update_job(layout: Layout, job_id: str, change: Callable[[Job], Mapping[str, Any] | None]) -> Job | None:
    """Read a record, change it and write it back under its lock, so that two of our processes never interleave
    (`stop`'s state is not lost under the session's own report); `change` gives the fields to set, None to leave it.
    None when there is no record."""
    from agentteams.store.fs.locking import run_locked

    def work() -> Job | None:
        job = read_job(layout, job_id)
        changes = change(job) if job is not None else None
        return write_job(layout, job, **changes) if job is not None and changes is not None else job

    try:
        return run_locked(job_file(layout, job_id), work)
    except NotFoundError:  # its directory is gone (`rm`): no record to change
        return None


def list_jobs(layout: Layout) -> list[Job]:
    """Every readable job record, newest first."""
    root = jobs_dir(layout)
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        path = root / name / "state.json"
        try:
            if (job := read_job(layout, name)) is not None:
                found.append(job)
        except InvalidNameError:
            continue  # not a job's directory (claude keeps pins.json there)
        except CorruptFileError as e:
            diagnostics.warning("skipping background session record %s: %s", path, e)
    return sorted(found, key=lambda j: j.created_at, reverse=True)


def remove_job(layout: Layout, job_id: str) -> None:
    """The record and its directory (a job's directory holds only what the CLI that ran it put there)."""
    directory = job_file(layout, job_id).parent
    if directory.is_symlink():
        raise InvalidNameError(f"{directory} is a link: not removing through it")
    shutil.rmtree(directory, ignore_errors=True)
