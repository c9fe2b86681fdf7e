"""Task leases: an owner of ours holds its task for a while and renews the hold while its process runs; a lease
left to run out sends the task back to pending. Kept in the task's `metadata` (which a real `claude` keeps as it
is), with a fencing token raised at each claim or reassignment, so a stale owner's later change is refused."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agentteams.errors import ConflictError
from agentteams.store.presence import read_presence
from agentteams.store.records import Task

if TYPE_CHECKING:
    from agentteams.store.paths import Layout

LEASE_KEY = "agentteamsLease"  # a key of the task's metadata; extra data a real `claude` ignores
ENV_VAR = "AGENTTEAMS_LEASE_SECONDS"
DEFAULT_SECONDS = 60.0  # twelve missed heartbeats: a busy machine does not take a working owner's task


def lease_seconds() -> float:
    """How long a lease runs unrenewed: AGENTTEAMS_LEASE_SECONDS (0.5 to 86400), else 60."""
    try:
        seconds = float(os.environ.get(ENV_VAR, DEFAULT_SECONDS))
    except ValueError:
        return DEFAULT_SECONDS
    return min(max(seconds, 0.5), 86400.0)


def now_ms() -> int:
    return int(time.time() * 1000)  # wall clock: leases are compared across processes


@dataclass(frozen=True)
class Lease:
    """One task's lease: its fencing token, its holder (None: released or taken back) and when it runs out;
    `taken_from` names the last holder whose lease ran out, for the refusal that holder gets later."""

    token: int
    owner: str | None = None
    expires_ms: int = 0
    seconds: float = DEFAULT_SECONDS
    taken_from: str | None = None
    taken_ms: int = 0

    @classmethod
    def of(cls, task: Task) -> Lease | None:
        raw = (task.metadata or {}).get(LEASE_KEY)
        if not isinstance(raw, dict) or not isinstance(raw.get("token"), int):
            return None  # none, or not ours to read: the task falls back to liveness
        owner, taken = raw.get("owner"), raw.get("takenFrom")
        return cls(
            raw["token"], owner if isinstance(owner, str) else None, _int(raw.get("expiresAt")),
            float(secs) if isinstance(secs := raw.get("seconds"), int | float) else DEFAULT_SECONDS,
            taken if isinstance(taken, str) else None, _int(raw.get("takenAt")),
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"token": self.token}
        if self.owner:
            out |= {"owner": self.owner, "expiresAt": self.expires_ms, "seconds": self.seconds}
        if self.taken_from:
            out |= {"takenFrom": self.taken_from, "takenAt": self.taken_ms, "seconds": self.seconds}
        return out

    def put(self, task: Task) -> None:
        task.metadata = {**(task.metadata or {}), LEASE_KEY: self.to_json()}

    def held_by(self, task: Task, agent: str) -> bool:
        """The task is `agent`'s and so is its lease (an owner set by a real `claude` since makes it not)."""
        return bool(self.owner) and self.owner == task.owner == agent and not task.resolved

    def expired(self, task: Task, at_ms: int) -> bool:
        return self.owner is not None and self.held_by(task, self.owner) and self.expires_ms <= at_ms


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def visible(changed: list[str], before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The changed fields to report: a metadata change that is only the lease's is the runtime's, not the model's."""
    if "metadata" not in changed:
        return changed
    old, new = dict(before.get("metadata") or {}), dict(after.get("metadata") or {})
    old.pop(LEASE_KEY, None)
    new.pop(LEASE_KEY, None)
    return changed if old != new else [k for k in changed if k != "metadata"]


class LeaseLostError(ConflictError):
    """A change by an owner whose lease is no longer the task's: it was taken back or reassigned meanwhile."""


def _now_is(task: Task) -> str:
    if not task.owner:
        return f"{task.status} with no owner"
    return f"{task.status}, owned by {task.owner}"


def refusal(task: Task, lease: Lease, agent: str) -> str:
    """What the stale owner's model reads."""
    if lease.taken_from == agent:
        when = time.strftime("%H:%M:%S UTC", time.gmtime(lease.taken_ms / 1000))
        why = (
            f"after your lease expired (not renewed for {lease.seconds:g}s, as when its process is stopped; at {when})"
        )
        head = f"task #{task.id} was taken back from you {why}"
    else:
        head = f"task #{task.id} is no longer yours (it was released or reassigned since you took it)"
    return f"{head}; it is now {_now_is(task)}. Your change was not made: check TaskList before going on."


class LeaseBook:
    """The fencing tokens this process's agents hold: (team, task id, agent) -> the token of their claim."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, str, str], int] = {}
        self._lock = threading.Lock()

    def grant(self, team: str, task: Task, agent: str, seconds: float | None = None) -> Lease:
        """`agent` (ours, in this process) takes the task's lease: a new token, which it holds."""
        old = Lease.of(task)
        secs = lease_seconds() if seconds is None else seconds
        lease = Lease(
            (old.token if old else 0) + 1, agent, now_ms() + int(secs * 1000), secs,
            old.taken_from if old else None, old.taken_ms if old else 0,
        )  # fmt: skip
        lease.put(task)
        with self._lock:
            self._held[(team, task.id, agent)] = lease.token
        return lease

    def holds(self, team: str, task_id: str, agent: str) -> int | None:
        with self._lock:
            return self._held.get((team, task_id, agent))

    def adopt(self, team: str, task_id: str, agent: str, token: int) -> None:
        with self._lock:
            self._held.setdefault((team, task_id, agent), token)

    def check(self, team: str, task: Task, caller: str | None) -> None:
        """Refuse a change by `caller` to a task it took under a token that is no longer the task's lease."""
        held = self.holds(team, task.id, caller) if caller else None
        lease = Lease.of(task)
        if held is None or lease is None or caller is None:
            return  # never ours to fence (a real `claude`'s task, or one this agent never took)
        if lease.token != held or lease.owner != caller:
            raise LeaseLostError(refusal(task, lease, caller))

    def after_update(self, team: str, task: Task, before: dict[str, Any], caller: str | None) -> None:
        """Keep the lease through a metadata change; a new owner ends it (the token goes up, a new owner of ours
        takes it at its next beat), or starts it at once when the caller took the task for itself."""
        old = (before.get("metadata") or {}).get(LEASE_KEY)
        if old is not None and LEASE_KEY not in (task.metadata or {}):
            task.metadata = {**(task.metadata or {}), LEASE_KEY: old}
        if before.get("owner") == task.owner:
            if caller and task.owner == caller and not task.resolved:  # its owner (ours) working on it
                lease = Lease.of(task)
                if lease is None or not lease.held_by(task, caller):
                    self.grant(team, task, caller)  # handed to it without a lease of its own yet: it takes one
                else:
                    with self._lock:  # having passed the check (or set itself as owner again): today's token
                        self._held[(team, task.id, caller)] = lease.token
            return
        if caller and task.owner == caller and not task.resolved:
            self.grant(team, task, caller)
        elif (lease := Lease.of(task)) is not None:
            dataclasses.replace(lease, token=lease.token + 1, owner=None, expires_ms=0).put(task)


def renewed(book: LeaseBook, team: str, task: Task, agent: str) -> bool:
    """Renew (or take) `agent`'s lease on its task when a renewal is due; True if the task changed."""
    if task.owner != agent or task.resolved:
        return False
    lease = Lease.of(task)
    if lease is None or not lease.held_by(task, agent):
        book.grant(team, task, agent)  # assigned to it by the lead or a real `claude`: its lease starts now
        return True
    book.adopt(team, task.id, agent, lease.token)
    secs = lease_seconds()
    if lease.expires_ms - now_ms() > secs * 500:  # more than half left: no write this beat
        return False
    dataclasses.replace(lease, expires_ms=now_ms() + int(secs * 1000), seconds=secs).put(task)
    return True


def taken_back(task: Task, at_ms: int, ours: Callable[[str], bool]) -> bool:
    """Send a task whose lease ran out back to pending, unowned (as unassigning does); True if it did. Only an
    owner of ours (`ours`: it has a presence record) loses a task this way; any other falls back to liveness."""
    lease = Lease.of(task)
    if lease is None or lease.owner is None or not lease.expired(task, at_ms) or not ours(lease.owner):
        return False
    task.owner, task.status = None, "pending"
    Lease(lease.token, None, 0, lease.seconds, lease.owner, at_ms).put(task)
    return True


@dataclass(frozen=True)
class TakenBack:
    """A task a sweep sent back to pending, and whose lease ran out."""

    task: Task
    owner: str
    seconds: float

    def line(self) -> str:
        return (
            f"Task #{self.task.id} is pending again: {self.owner} did not renew its lease on it "
            f"({self.seconds:g}s); its process may be stopped or hung."
        )


class LeasedTasks(Protocol):
    """What the lease rules need of a task store that keeps tasks as files (the file store's `TaskStore`)."""

    layout: Layout
    leases: LeaseBook

    def list_tasks(self, team: str) -> list[Task]: ...

    def rewrite(self, team: str, task_id: str, change: Callable[[Task], bool]) -> Task | None: ...


def renew_all(tasks: LeasedTasks, team: str, agent: str) -> None:
    """`agent` (ours, running here) renews the leases of its open tasks, taking one where it has none."""
    for t in tasks.list_tasks(team):
        if t.owner == agent and not t.resolved:
            tasks.rewrite(team, t.id, lambda task: renewed(tasks.leases, team, task, agent))


def sweep(tasks: LeasedTasks, team: str, listed: list[Task] | None = None) -> list[TakenBack]:
    """Send back to pending every task whose owner of ours let its lease run out; `listed`: the tasks as the caller
    has just read them (then they are not read again: only a task taken back is, under its lock)."""
    at, out = now_ms(), []

    def ours(name: str) -> bool:
        return read_presence(tasks.layout, team, name) is not None

    for t in tasks.list_tasks(team) if listed is None else listed:
        lease = Lease.of(t)
        if lease is None or lease.owner is None or not lease.expired(t, at):
            continue  # the common case, seen without taking the task's lock
        if (done := tasks.rewrite(team, t.id, lambda task: taken_back(task, at, ours))) is not None:
            out.append(TakenBack(done, lease.owner, lease.seconds))
    return out
