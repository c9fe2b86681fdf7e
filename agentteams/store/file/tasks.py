"""The task store: one JSON file per task under `tasks/<team>/`, shared with Claude Code.

Lock order, always: the list lock (`.lock`) before any task lock, and never two task locks at once.
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentteams import diagnostics
from agentteams.errors import CorruptFileError, InvalidNameError, NotFoundError
from agentteams.store import leases
from agentteams.store.file import board_cache, task_files
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import (
    atomic_write_json,
    parse_json_bytes,
    quarantine,
    read_bytes,
)
from agentteams.store.fs.locking import ensure_file, locked, run_locked
from agentteams.store.leases import LeaseBook, TakenBack
from agentteams.store.paths import LEAD_NAME, Layout, refuse_control, task_id_part
from agentteams.store.records import Task, TaskStatus
from agentteams.store.task_graph import check_links
from agentteams.store.values import UNSET, BoardTask, ClaimResult, UnassignResult, UpdateResult

if TYPE_CHECKING:
    from agentteams.store.file.mailbox import Mailbox
    from agentteams.store.file.teams import TeamStore

Order = Callable[[], bool]  # an operation's `Task.schema_order`, read from the team config when first needed


class TaskStore:
    def __init__(
        self, layout: Layout | None = None, mailbox: Mailbox | Callable[[], Mailbox] | None = None
    ) -> None:  # fmt: skip
        self.layout = layout or Layout.from_env()
        self._mailbox = mailbox  # or how to get it (the store's own, which signs): asked on first use
        self.leases = LeaseBook()  # the fencing tokens of this process's owners

    @property
    def mailbox(self) -> Mailbox:
        """Made on first use: reading tasks must not pay for the mailbox and protocol imports."""
        if self._mailbox is None:
            from agentteams.store.file.mailbox import Mailbox

            self._mailbox = Mailbox(self.layout)
        elif callable(self._mailbox):
            self._mailbox = self._mailbox()
        return self._mailbox

    @property
    def teams(self) -> TeamStore:
        return self.mailbox.teams

    # -- files --------------------------------------------------------------------------------------

    def _list_target(self, team: str) -> Path:
        """The list lock's target; it and the task dir are made if missing (never through a link)."""
        safe_paths.make_dir(self.layout.task_dir(team), parents=True)
        ensure_file(self.layout.task_lock_target(team), b"")
        return self.layout.task_lock_target(team)

    @contextlib.contextmanager
    def _list_lock(self, team: str) -> Iterator[None]:
        with locked(self._list_target(team)):
            yield

    def _load(self, team: str, task_id: str, *, under_lock: bool) -> Task | None:
        path = self.layout.task_file(team, task_id)
        raw = read_bytes(path)
        return None if raw is None else self._parsed(team, task_id, raw, str(path), under_lock=under_lock)

    def _parsed(self, team: str, task_id: str, raw: bytes, where: str, *, under_lock: bool) -> Task | None:
        """The task in `raw` (read from `where`); a corrupt file is looked at again under its lock, then moved aside."""
        try:
            return Task.from_json(parse_json_bytes(raw, where), where)
        except CorruptFileError as e:
            path = self.layout.task_file(team, task_id)
            if not under_lock:
                return run_locked(path, lambda: self._load(team, task_id, under_lock=True))
            aside = quarantine(path)
            task_files.raise_watermark(self.layout, team, int(task_id))  # its id must never be handed out again
            diagnostics.warning("%s; moved it to %s", e, aside)
            return None

    def _write(self, team: str, task: Task, order: Order) -> None:
        task.schema_order = order()
        atomic_write_json(self.layout.task_file(team, task.id), task.to_json())

    def _order(self, team: str) -> Order:
        """The team's task key order for one operation: looked up at its first write, then remembered."""
        return functools.cache(lambda: task_files.schema_order(self.layout, team))

    # -- queries ------------------------------------------------------------------------------------

    def get(self, team: str, task_id: str) -> Task:
        task = self._load(team, task_id_part(task_id), under_lock=False)
        if task is None:
            raise NotFoundError(f"task #{task_id} not found in team {team!r}")
        return task

    def has_list(self, team: str) -> bool:
        return self.layout.task_dir(team).is_dir()

    def list_tasks(self, team: str) -> list[Task]:
        """All tasks in numeric id order, each file read once; a corrupt file is moved aside and reported, not
        dropped."""
        listed = task_files.read_all(self.layout, team)
        return [t for i, raw, where in listed if (t := self._parsed(team, i, raw, where, under_lock=False))]

    def board(self, team: str) -> list[BoardTask]:
        """Every task as a view shows it, in id order: read lean, or from our stat-checked copy (board_cache.py)."""
        return board_cache.read_board(
            self.layout, team, lambda i, raw, where: self._parsed(team, i, raw, where, under_lock=False)
        )

    def list_swept(self, team: str) -> tuple[list[Task], list[TakenBack]]:
        """Every task, those whose owner of ours let its lease run out sent back to pending first: one read of the
        list (the tasks taken back are read again under their locks)."""
        listed = self.list_tasks(team)
        back = leases.sweep(self, team, listed)
        now = {b.task.id: b.task for b in back}
        return [now.get(t.id, t) for t in listed], back

    @staticmethod
    def open_ids(tasks: Sequence[Task | BoardTask]) -> set[str]:
        return {t.id for t in tasks if not t.resolved}

    def find_claimable(self, team: str) -> Task | None:
        """Lowest-id pending, unowned task whose blockers are all resolved."""
        return task_files.first_claimable(self.list_tasks(team))

    # -- changes ------------------------------------------------------------------------------------

    def create(
        self, team: str, subject: str, description: str = "", *, active_form: str | None = None,
        metadata: dict[str, Any] | None = None, blocked_by: Sequence[str] = (),
    ) -> Task:  # fmt: skip
        if not subject.strip():
            raise InvalidNameError("a task needs a subject")
        blockers = [task_id_part(b) for b in blocked_by]
        order = self._order(team)

        def make() -> Task:
            for b in blockers:
                if self._load(team, b, under_lock=False) is None:
                    raise NotFoundError(f"task #{b} not found in team {team!r}")
            taken = max([0, *task_files.ids_on_disk(self.layout, team)][-1], task_files.watermark(self.layout, team))
            new_id = str(taken + 1)
            task = Task(
                id=new_id, subject=subject, description=description, active_form=active_form,
                status="pending", blocks=[], blocked_by=list(dict.fromkeys(blockers)), metadata=metadata,
            )  # fmt: skip
            self._write(team, task, order)  # the list lock's own write: refused if it was broken
            for b in task.blocked_by:
                self._link(team, b, "blocks", new_id, order)
            return task

        return run_locked(self._list_target(team), make)  # redone if the lock breaks before the write

    def _link(self, team: str, task_id: str, attr: Literal["blocks", "blocked_by"], other: str, order: Order) -> None:
        def link() -> None:
            t = self._load(team, task_id, under_lock=True)
            if t is not None and other not in getattr(t, attr):
                getattr(t, attr).append(other)
                self._write(team, t, order)

        run_locked(self.layout.task_file(team, task_id), link)

    def _unlink(self, team: str, task_id: str, other: str, order: Order) -> None:
        def unlink() -> None:
            t = self._load(team, task_id, under_lock=True)
            if t is not None and (other in t.blocks or other in t.blocked_by):
                t.blocks = [x for x in t.blocks if x != other]
                t.blocked_by = [x for x in t.blocked_by if x != other]
                self._write(team, t, order)

        run_locked(self.layout.task_file(team, task_id), unlink)

    def update(
        self, team: str, task_id: str, *, subject: str | None = None, description: str | None = None,
        active_form: str | None = None, status: TaskStatus | None = None, owner: str | None = UNSET,
        add_blocks: Sequence[str] = (), add_blocked_by: Sequence[str] = (),
        metadata: dict[str, Any] | None = None, assigned_by: str = LEAD_NAME,
    ) -> UpdateResult:  # fmt: skip
        """Merge changes into a task. `status="deleted"` deletes it; `owner=""` or None clears the owner. A change
        by `assigned_by` to a task it took under a lease it has since lost is refused (LeaseLostError)."""
        task_id = task_id_part(task_id)
        if isinstance(owner, str):
            refuse_control(owner, "owner")
        if status == "deleted":
            task = self.delete(team, task_id)
            return UpdateResult(task, ["status"])
        blocks = [task_id_part(x) for x in add_blocks]
        blocked_by = [task_id_part(x) for x in add_blocked_by]
        fields = {"subject": subject, "description": description, "active_form": active_form,
                  "status": status, "metadata": metadata}  # fmt: skip
        order = self._order(team)
        if blocks or blocked_by:
            with self._list_lock(team):
                self._check_links(team, task_id, blocks, blocked_by)
                result = self._update_one(team, task_id, fields, owner, blocks, blocked_by, order, assigned_by)
                for other in blocks:
                    self._link(team, other, "blocked_by", task_id, order)
                for other in blocked_by:
                    self._link(team, other, "blocks", task_id, order)
        else:
            result = self._update_one(team, task_id, fields, owner, [], [], order, assigned_by)
        if result.updated and "owner" in result.updated and result.task.owner:
            result.assignment_sent = self._notify_owner(team, result.task, assigned_by)
        return result

    def _update_one(
        self, team: str, task_id: str, fields: dict[str, Any], owner: str | None,
        blocks: list[str], blocked_by: list[str], order: Order, caller: str | None = None,
    ) -> UpdateResult:  # fmt: skip

        def change() -> UpdateResult:
            task = self._load(team, task_id, under_lock=True)
            if task is None:
                raise NotFoundError(f"task #{task_id} not found in team {team!r}")
            if owner is UNSET:  # an explicit (re)assignment is never fenced: it says who has the task from now
                self.leases.check(team, task, caller)
            before = copy.deepcopy(task.to_json())  # to_json shares the task's lists
            for attr, value in fields.items():
                if value is not None:
                    setattr(task, attr, value)
            if owner is not UNSET:
                task.owner = owner or None
            task.blocks += [x for x in blocks if x not in task.blocks]
            task.blocked_by += [x for x in blocked_by if x not in task.blocked_by]
            self.leases.after_update(team, task, before, caller)
            task.validate(str(self.layout.task_file(team, task_id)))
            after = task.to_json()
            changed = [k for k in Task.ORDER if before.get(k) != after.get(k)]
            if changed:
                self._write(team, task, order)
            return UpdateResult(task, leases.visible(changed, before, after))

        return run_locked(self.layout.task_file(team, task_id), change)

    def _check_links(self, team: str, task_id: str, blocks: list[str], blocked_by: list[str]) -> None:
        """Refuse links to missing tasks, to itself, or that would close a dependency cycle."""
        tasks = {t.id: t for t in self.list_tasks(team)}
        if task_id not in tasks:
            raise NotFoundError(f"task #{task_id} not found in team {team!r}")
        check_links(tasks, task_id, blocks, blocked_by, team)

    def _notify_owner(self, team: str, task: Task, assigned_by: str) -> bool:
        """Send `task_assignment` to a new owner who is a member and not the assigner."""
        if not task.owner or task.owner == assigned_by or not self.mailbox.teams.exists(team):
            return False
        config = self.mailbox.teams.read(team)
        if config.member(task.owner) is None:
            return False
        from agentteams.store.protocol import TaskAssignment

        msg = TaskAssignment(
            task_id=task.id, subject=task.subject, description=task.description, assigned_by=assigned_by
        )
        self.mailbox.send_message(team, task.owner, msg, sender=assigned_by)
        return True

    def delete(self, team: str, task_id: str) -> Task:
        """Raise the watermark past a task's id, then remove it (a crash between leaves the task, never its id reused),
        and drop references to it."""
        task_id = task_id_part(task_id)
        order = self._order(team)

        def remove() -> Task:
            task = self.get(team, task_id)
            task_files.raise_watermark(self.layout, team, int(task_id))
            self.layout.task_file(team, task_id).unlink()
            for other in self.list_tasks(team):
                if task_id in other.blocks or task_id in other.blocked_by:
                    self._unlink(team, other.id, task_id, order)
            return task

        task = run_locked(self._list_target(team), remove)
        task.status = "deleted"
        return task

    def claim(self, team: str, task_id: str, agent: str, *, check_busy: bool = False) -> ClaimResult:
        """Take an unowned, unresolved, unblocked task for `agent` (owner set, status in_progress). Only the task
        and its blockers are read; `check_busy` reads every task once, under the list lock (as Claude Code)."""
        task_id = task_id_part(task_id)
        refuse_control(agent, "agent")
        if not self.layout.task_file(team, task_id).exists():
            return ClaimResult(False, reason="task_not_found")
        order = self._order(team)
        if check_busy:
            with self._list_lock(team):  # the board as a view reads it: a stat per file once our copy is current
                claim = functools.partial(self._claim, team, task_id, agent, order, self.board(team))
                return run_locked(self.layout.task_file(team, task_id), claim)
        return run_locked(
            self.layout.task_file(team, task_id), functools.partial(self._claim, team, task_id, agent, order)
        )

    def _claim(
        self, team: str, task_id: str, agent: str, order: Order, listed: list[BoardTask] | None = None
    ) -> ClaimResult:
        """The claim's checks and write; the caller holds the task's lock. With `listed` (every task, read under
        the list lock the caller holds) the blockers are looked up there and the agent checked for other open
        tasks; without, only the blockers' files are read."""
        task = self._load(team, task_id, under_lock=True)
        if task is None:
            return ClaimResult(False, reason="task_not_found")
        if task.owner and task.owner != agent:
            return ClaimResult(False, task, "already_claimed")
        if task.resolved:
            return ClaimResult(False, task, "already_resolved")
        others = [] if listed is None else [t for t in listed if t.id != task_id]
        if listed is None:
            open_ids = {d for d in task.blocked_by if task_files.still_open(self.layout, team, d)}
        else:
            open_ids = self.open_ids(others)
        if any(d in open_ids for d in task.blocked_by):
            return ClaimResult(False, task, "blocked")
        busy = [t.id for t in others if t.owner == agent and not t.resolved]
        if busy:
            return ClaimResult(False, task, "agent_busy", busy)
        task.owner, task.status = agent, "in_progress"
        self.leases.grant(team, task, agent)  # held from the claim: an owner that dies before its first beat loses it
        self._write(team, task, order)
        return ClaimResult(True, task)

    def claim_next(self, team: str, agent: str, *, check_busy: bool = False) -> ClaimResult:
        """Claim the lowest-id claimable task (retried when another agent wins the race). The look is one read of the
        board without a lock, and a look that finds nothing, or finds the agent busy, stops there: a lock would wake
        every watcher of the task dir, the looker's own too, so an idle team would spin. Only a claim itself locks
        (with `check_busy`, the list lock and a read of the board under it, as Claude Code). Both reads are the
        view's (`board`): a stat per task file, a file read only when it changed since our copy of the board."""
        while (found := task_files.first_claimable(listed := self.board(team))) is not None:
            busy = [t.id for t in listed if check_busy and t.owner == agent and not t.resolved]
            if busy:
                task = self._load(team, found.id, under_lock=False)  # the one record the answer carries
                if task is None:
                    continue  # deleted meanwhile: look again
                return ClaimResult(False, task, "agent_busy", busy)
            result = self.claim(team, found.id, agent, check_busy=check_busy)
            if result.success or result.reason == "agent_busy":
                return result
        return ClaimResult(False, reason="task_not_found")

    def unassign_all(self, team: str, agent_name: str, agent_id: str | None = None) -> UnassignResult:
        """Put every unfinished task of a departed agent back to pending with no owner."""
        owners = {agent_name, agent_id or agent_name}
        order = self._order(team)
        moved = []
        for t in self.list_tasks(team):
            if not t.resolved and t.owner in owners:
                # what update(owner=None, status="pending") does, with the team's generation read once
                moved.append(self._update_one(team, t.id, {"status": "pending"}, None, [], [], order).task)
        return UnassignResult(moved)

    # -- leases (store/leases.py) -------------------------------------------------------------------

    def rewrite(self, team: str, task_id: str, change: Callable[[Task], bool]) -> Task | None:
        """Apply `change` to the task under its lock, writing it back if `change` says it changed it."""
        order = self._order(team)

        def apply() -> Task | None:
            task = self._load(team, task_id, under_lock=True)
            if task is not None and change(task):
                self._write(team, task, order)
                return task
            return None

        return run_locked(self.layout.task_file(team, task_id), apply)

    def renew_leases(self, team: str, agent: str) -> None:
        """`agent` (ours, running here) renews the leases of its open tasks, taking one where it has none."""
        leases.renew_all(self, team, agent)

    def check_lease(self, team: str, task: Task, agent: str) -> None:
        """Raise LeaseLostError if `agent` took this task under a lease it has since lost (the update re-checks)."""
        self.leases.check(team, task, agent)

    def sweep_leases(self, team: str) -> list[TakenBack]:
        """Send back to pending every task whose owner of ours let its lease run out."""
        return leases.sweep(self, team)
