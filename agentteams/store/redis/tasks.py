"""Tasks in Redis: one hash per task (store/redis/task_hash.py), an id counter and an index per team. Create, claim,
complete, delete and the lease sweep are single Lua scripts (store/redis/scripts.py); other updates are a
compare-and-set of the hashes they read (WATCH, MULTI/EXEC), with the file store's lease rules (store/leases.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, get_args

from agentteams.errors import ConflictError, InvalidNameError, NotFoundError
from agentteams.store import leases
from agentteams.store.leases import LeaseBook, LeaseLostError, TakenBack, lease_seconds, now_ms
from agentteams.store.outages import Steady, judged
from agentteams.store.paths import LEAD_NAME, refuse_control, task_id_part
from agentteams.store.records import Task, TaskStatus
from agentteams.store.redis.connection import Client, Keys, watch_error
from agentteams.store.redis.scripts import source
from agentteams.store.redis.task_hash import doc_of_new, to_fields, to_task
from agentteams.store.task_graph import check_links
from agentteams.store.values import UNSET, BoardTask, ClaimReason, ClaimResult, UnassignResult, UpdateResult

if TYPE_CHECKING:
    from agentteams.store.redis.mailbox import RedisMail
    from agentteams.store.redis.teams import RedisTeams

T = TypeVar("T")
MAX_CAS_TRIES = 1000
REASONS: dict[str, ClaimReason] = {r: r for r in get_args(ClaimReason)}  # a script's refusal, as the type says it


class HeldLeases(LeaseBook):
    """The LeaseBook, plus setting a token the server granted (a claim or a renewal in a script)."""

    def hold(self, team: str, task_id: str, agent: str, token: int) -> None:
        with self._lock:
            self._held[(team, task_id, agent)] = token


class RedisTasks:
    """The `Tasks` protocol over hashes and scripts."""

    def __init__(
        self, client: Client, teams: RedisTeams, mail: Callable[[], RedisMail], steady: Steady | None = None
    ) -> None:
        self.client, self.teams, self._mail = client, teams, mail
        self.steady = steady or (lambda: float("inf"))  # seconds the server has answered since it was away
        self.leases = HeldLeases()
        self._scripts = {name: client.register_script(source(name)) for name in
                         ("create", "claim", "claim_next", "complete", "delete", "renew", "sweep")}  # fmt: skip

    def _keys(self, team: str) -> Keys:
        return Keys(self.teams.canonical(team))

    def _run(self, name: str, keys: list[str], args: list[Any]) -> list[str]:
        return list(self._scripts[name](keys=keys, args=args))

    # -- queries ------------------------------------------------------------------------------------

    def get(self, team: str, task_id: str) -> Task:
        task_id = task_id_part(task_id)
        keys = self._keys(team)
        fields = self.client.hgetall(keys.task(task_id))
        if not fields:
            raise NotFoundError(f"task #{task_id} not found in team {team!r}")
        return to_task(task_id, fields, keys.task(task_id))

    def board(self, team: str) -> list[BoardTask]:
        return [BoardTask.of(t) for t in self.list_tasks(team)]

    def list_tasks(self, team: str) -> list[Task]:
        keys = self._keys(team)
        ids: list[str] = self.client.zrange(keys.task_index, 0, -1)
        with self.client.pipeline(transaction=False) as pipe:
            for i in ids:
                pipe.hgetall(keys.task(i))
            found = pipe.execute()
        return [to_task(i, f, keys.task(i)) for i, f in zip(ids, found, strict=True) if f]

    def has_list(self, team: str) -> bool:
        keys = self._keys(team)
        return bool(self.client.exists(keys.task_seq, keys.task_index))

    # -- scripts ------------------------------------------------------------------------------------

    def create(
        self, team: str, subject: str, description: str = "", *, active_form: str | None = None,
        metadata: dict[str, Any] | None = None, blocked_by: Sequence[str] = (),
    ) -> Task:  # fmt: skip
        if not subject.strip():
            raise InvalidNameError("a task needs a subject")
        blockers = list(dict.fromkeys(task_id_part(b) for b in blocked_by))
        keys = self._keys(team)
        doc = doc_of_new(subject, description, active_form, metadata)
        out = self._run("create", [keys.task_seq], [keys.prefix, doc, " ".join(blockers)])
        if out[0] == "missing":
            raise NotFoundError(f"task #{out[1]} not found in team {team!r}")
        return self.get(team, out[1])

    def claim(self, team: str, task_id: str, agent: str, *, check_busy: bool = False) -> ClaimResult:
        """Take an unowned, unresolved, unblocked task for `agent`, with a lease and a new fencing token."""
        task_id = task_id_part(task_id)
        refuse_control(agent, "agent")
        keys = self._keys(team)
        secs = lease_seconds()
        args = [keys.prefix, task_id, agent, "1" if check_busy else "0", repr(secs), now_ms()]
        out = self._run("claim", [keys.task(task_id)], args)
        if out[0] == "task_not_found":
            return ClaimResult(False, reason="task_not_found")
        task = self.get(team, task_id)
        if out[0] != "ok":
            return ClaimResult(False, task, REASONS[out[0]], out[1:])
        self.leases.hold(keys.team, task_id, agent, int(out[1]))
        return ClaimResult(True, task)

    def claim_next(self, team: str, agent: str, *, check_busy: bool = False) -> ClaimResult:
        """Claim the lowest-id claimable task: found and claimed in one script, so claimers never collide."""
        refuse_control(agent, "agent")
        keys = self._keys(team)
        args = [keys.prefix, agent, "1" if check_busy else "0", repr(lease_seconds()), now_ms()]
        out = self._run("claim_next", [keys.task_index], args)
        if out[0] == "task_not_found":
            return ClaimResult(False, reason="task_not_found")
        if out[0] == "agent_busy":
            return ClaimResult(False, self.get(team, out[1]), "agent_busy", out[2:])
        self.leases.hold(keys.team, out[2], agent, int(out[1]))
        return ClaimResult(True, self.get(team, out[2]))

    def _complete(self, team: str, task_id: str, caller: str) -> UpdateResult:
        """Status to completed in one script: refused (LeaseLostError) when `caller` took the task under a token
        that is no longer the task's."""
        keys = self._keys(team)
        held = self.leases.holds(keys.team, task_id, caller)
        out = self._run("complete", [keys.task(task_id)], [keys.prefix, task_id, caller, "" if held is None else held])
        if out[0] == "task_not_found":
            raise NotFoundError(f"task #{task_id} not found in team {team!r}")
        task = self.get(team, task_id)
        if out[0] == "lease_lost":
            lease = leases.Lease.of(task)
            assert lease is not None  # the script found one
            raise LeaseLostError(leases.refusal(task, lease, caller))
        return UpdateResult(task, ["status"] if out[0] == "ok" else [])

    def delete(self, team: str, task_id: str) -> Task:
        task_id = task_id_part(task_id)
        keys = self._keys(team)
        flat = self._run("delete", [keys.task(task_id)], [keys.prefix, task_id])
        if not flat:
            raise NotFoundError(f"task #{task_id} not found in team {team!r}")
        task = to_task(task_id, dict(zip(flat[::2], flat[1::2], strict=True)), keys.task(task_id))
        task.status = "deleted"
        return task

    # -- updates ------------------------------------------------------------------------------------

    def update(
        self, team: str, task_id: str, *, subject: str | None = None, description: str | None = None,
        active_form: str | None = None, status: TaskStatus | None = None, owner: str | None = UNSET,
        add_blocks: Sequence[str] = (), add_blocked_by: Sequence[str] = (), metadata: dict[str, Any] | None = None,
        assigned_by: str = LEAD_NAME,
    ) -> UpdateResult:  # fmt: skip
        task_id = task_id_part(task_id)
        if isinstance(owner, str):
            refuse_control(owner, "owner")
        if status == "deleted":
            return UpdateResult(self.delete(team, task_id), ["status"])
        blocks = [task_id_part(x) for x in add_blocks]
        blocked_by = [task_id_part(x) for x in add_blocked_by]
        fields = {"subject": subject, "description": description, "active_form": active_form,
                  "status": status, "metadata": metadata}  # fmt: skip
        if status == "completed" and owner is UNSET and not (blocks or blocked_by or subject or description
                                                              or active_form or metadata):  # fmt: skip
            return self._complete(team, task_id, assigned_by)
        result = self._update_one(team, task_id, fields, owner, blocks, blocked_by, assigned_by)
        if "owner" in result.updated and result.task.owner:
            result.assignment_sent = self._notify_owner(team, result.task, assigned_by)
        return result

    def _update_one(
        self, team: str, task_id: str, fields: dict[str, Any], owner: str | None, blocks: list[str],
        blocked_by: list[str], caller: str | None,
    ) -> UpdateResult:  # fmt: skip
        keys = self._keys(team)
        links = bool(blocks or blocked_by)

        def change(pipe: Client) -> UpdateResult:
            tasks = self._read(pipe, keys, links, task_id)
            task = tasks.get(task_id)
            if task is None:
                raise NotFoundError(f"task #{task_id} not found in team {team!r}")
            if links:
                check_links(tasks, task_id, blocks, blocked_by, team)
            if owner is UNSET:  # an explicit (re)assignment is never fenced
                self.leases.check(keys.team, task, caller)
            before = copy.deepcopy(task.to_json())
            _apply(task, fields, owner, blocks, blocked_by)
            self.leases.after_update(keys.team, task, before, caller)
            task.validate(keys.task(task_id))
            after = task.to_json()
            changed = [k for k in Task.ORDER if before.get(k) != after.get(k)]
            pipe.multi()
            if changed:
                _put(pipe, keys, task)
                for other in blocks:
                    _link(pipe, keys, tasks[other], "blocked_by", task_id)
                for other in blocked_by:
                    _link(pipe, keys, tasks[other], "blocks", task_id)
                pipe.xadd(
                    keys.events, {"op": "update", "task": task_id, "by": caller or ""}, maxlen=1000, approximate=True
                )
            pipe.execute()
            return UpdateResult(task, leases.visible(changed, before, after))

        watched = [keys.task(task_id), *([keys.task_index] if links else [])]
        return self._cas(watched, change, links, keys)

    def _read(self, pipe: Client, keys: Keys, every: bool, task_id: str) -> dict[str, Task]:
        """The task (every task of the team with `every`), read under WATCH in the pipeline's immediate mode."""
        ids: list[str] = pipe.zrange(keys.task_index, 0, -1) if every else [task_id]
        if every:
            pipe.watch(*[keys.task(i) for i in ids])
        out = {}
        for i in ids:
            if found := pipe.hgetall(keys.task(i)):
                out[i] = to_task(i, found, keys.task(i))
        return out

    def _cas(self, watched: list[str], change: Callable[[Client], T], links: bool, keys: Keys) -> T:
        lost = watch_error()
        with self.client.pipeline() as pipe:
            for _ in range(MAX_CAS_TRIES):
                try:
                    pipe.watch(*watched)
                    return change(pipe)
                except lost:
                    pipe.reset()
        raise ConflictError(f"{keys.team}: tasks kept changing under {MAX_CAS_TRIES} tries to update one")

    def _notify_owner(self, team: str, task: Task, assigned_by: str) -> bool:
        """Send `task_assignment` to a new owner who is a member and not the assigner."""
        if not task.owner or task.owner == assigned_by or not self.teams.exists(team):
            return False
        if self.teams.read(team).member(task.owner) is None:
            return False
        from agentteams.store.protocol import TaskAssignment

        msg = TaskAssignment(task_id=task.id, subject=task.subject, description=task.description,
                             assigned_by=assigned_by)  # fmt: skip
        self._mail().send_message(team, task.owner, msg, sender=assigned_by)
        return True

    def unassign_all(self, team: str, agent_name: str, agent_id: str | None = None) -> UnassignResult:
        owners = {agent_name, agent_id or agent_name}
        moved = [
            self._update_one(team, t.id, {"status": "pending"}, None, [], [], None).task
            for t in self.list_tasks(team) if not t.resolved and t.owner in owners
        ]  # fmt: skip
        return UnassignResult(moved)

    # -- leases -------------------------------------------------------------------------------------

    def renew_leases(self, team: str, agent: str) -> None:
        keys = self._keys(team)
        out = self._run("renew", [keys.task_index], [keys.prefix, agent, repr(lease_seconds()), now_ms()])
        for task_id, token, granted in zip(out[::3], out[1::3], out[2::3], strict=True):
            if granted == "1":
                self.leases.hold(keys.team, task_id, agent, int(token))
            else:
                self.leases.adopt(keys.team, task_id, agent, int(token))

    def sweep_leases(self, team: str) -> list[TakenBack]:
        keys = self._keys(team)
        out = self._run("sweep", [keys.task_index], [keys.prefix, now_ms()])
        return [
            TakenBack(self.get(team, task_id), owner, float(secs))
            for task_id, owner, secs in zip(out[::3], out[1::3], out[2::3], strict=True)
        ]

    def list_swept(self, team: str) -> tuple[list[Task], list[TakenBack]]:
        """Every task from one read; the sweep's script runs only when a lease read there has run out (it checks
        again, atomically, and whose owner is ours), and only the tasks it took back are read again."""
        listed, at = self.list_tasks(team), now_ms()
        if not judged(self.steady, lease_seconds()):  # leases that ran out while it was away: the lead's sweep,
            return listed, []  # two beats after it is back (team/lease_keeper.py), takes back what was not renewed
        if not any((lease := leases.Lease.of(t)) is not None and lease.expired(t, at) for t in listed):
            return listed, []
        back = self.sweep_leases(team)
        now = {b.task.id: b.task for b in back}
        return [now.get(t.id, t) for t in listed], back

    def check_lease(self, team: str, task: Task, agent: str) -> None:
        self.leases.check(self._keys(team).team, task, agent)


def _apply(task: Task, fields: dict[str, Any], owner: str | None, blocks: list[str], blocked_by: list[str]) -> None:
    """An update's changes, as the file store makes them (None leaves a field; an empty owner clears it)."""
    for attr, value in fields.items():
        if value is not None:
            setattr(task, attr, value)
    if owner is not UNSET:
        task.owner = owner or None
    task.blocks += [x for x in blocks if x not in task.blocks]
    task.blocked_by += [x for x in blocked_by if x not in task.blocked_by]


def _put(pipe: Client, keys: Keys, task: Task) -> None:
    pipe.delete(keys.task(task.id))
    pipe.hset(keys.task(task.id), mapping=to_fields(task))


def _link(pipe: Client, keys: Keys, other: Task, attr: str, task_id: str) -> None:
    ids: list[str] = getattr(other, attr)
    if task_id not in ids:
        pipe.hset(keys.task(other.id), attr, " ".join([*ids, task_id]))
