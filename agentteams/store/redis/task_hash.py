"""A task as a Redis hash and back: the fields the Lua scripts check (owner, status, links, the lease) apart, the
rest of the task's JSON whole in `doc`. The lease goes back into the task's metadata as store/leases.py keeps it,
so the lease logic reads the same task whichever store holds it."""

from __future__ import annotations

import json
from typing import Any

from agentteams.store.leases import LEASE_KEY, Lease
from agentteams.store.records import Task

SPLIT = ("id", "owner", "status", "blocks", "blockedBy")  # kept as fields of their own, not in `doc`
LEASE_FIELDS = ("token", "lease_owner", "expires", "seconds", "taken_from", "taken_at")


def to_task(task_id: str, fields: dict[str, str], where: str) -> Task:
    """The Task a hash holds (ShapeError when its doc is not a task's)."""
    doc: dict[str, Any] = json.loads(fields.get("doc") or "{}")
    obj = {"id": task_id, **doc, "status": fields.get("status") or "pending"}
    obj["blocks"] = fields.get("blocks", "").split()
    obj["blockedBy"] = fields.get("blocked_by", "").split()
    if owner := fields.get("owner"):
        obj["owner"] = owner
    task = Task.from_json(obj, where)
    if fields.get("token"):
        _lease(fields).put(task)
    return task


def _lease(fields: dict[str, str]) -> Lease:
    secs = float(fields.get("seconds") or 60)
    return Lease(
        int(fields["token"]), fields.get("lease_owner") or None, int(float(fields.get("expires") or 0)), secs,
        fields.get("taken_from") or None, int(float(fields.get("taken_at") or 0)),
    )  # fmt: skip


def to_fields(task: Task) -> dict[str, str]:
    """A task's hash: every field written, so a write replaces what was there."""
    obj = task.to_json()
    metadata = dict(obj.get("metadata") or {})
    lease = Lease.of(task)
    if LEASE_KEY in metadata:
        metadata.pop(LEASE_KEY)
        if metadata:
            obj["metadata"] = metadata
        else:
            obj.pop("metadata")  # the lease was all there was: it comes back from the lease fields
    doc = {k: v for k, v in obj.items() if k not in SPLIT}
    fields = {
        "doc": json.dumps(doc), "owner": task.owner or "", "status": task.status,
        "blocks": " ".join(task.blocks), "blocked_by": " ".join(task.blocked_by),
    }  # fmt: skip
    if lease is not None:
        fields |= {
            "token": str(lease.token), "lease_owner": lease.owner or "", "expires": str(lease.expires_ms),
            "seconds": repr(lease.seconds), "taken_from": lease.taken_from or "", "taken_at": str(lease.taken_ms),
        }  # fmt: skip
    return fields


def doc_of_new(
    subject: str, description: str, active_form: str | None, metadata: dict[str, Any] | None
) -> str:  # fmt: skip
    """`doc` of a task about to be created (its id comes from the server's counter)."""
    task = Task(
        id="0", subject=subject, description=description, active_form=active_form, blocks=[], blocked_by=[],
        metadata=metadata,
    )  # fmt: skip
    return to_fields(task)["doc"]
