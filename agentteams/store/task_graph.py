"""The task graph's rules, shared by every store: a link names an existing other task, and a dependency that would
close a cycle is refused."""

from __future__ import annotations

from agentteams.errors import ConflictError, NotFoundError
from agentteams.store.records import Task


def check_links(tasks: dict[str, Task], task_id: str, blocks: list[str], blocked_by: list[str], team: str) -> None:
    """Refuse links to missing tasks, to itself, or that would close a dependency cycle."""
    for other in (*blocks, *blocked_by):
        if other == task_id:
            raise ConflictError(f"task #{task_id} cannot depend on itself")
        if other not in tasks:
            raise NotFoundError(f"task #{other} not found in team {team!r}")
    # edges run blocker -> blocked; adding a -> b closes a cycle when b already reaches a
    edges: dict[str, set[str]] = {i: set(t.blocks) for i, t in tasks.items()}
    for i, t in tasks.items():
        for blocker in t.blocked_by:
            edges.setdefault(blocker, set()).add(i)
    for a, b in [*((task_id, x) for x in blocks), *((x, task_id) for x in blocked_by)]:
        if reaches(edges, b, a):
            raise ConflictError(f"making #{a} block #{b} would create a dependency cycle")
        edges.setdefault(a, set()).add(b)


def reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    """Whether `goal` is reachable from `start` along `edges` (task id -> the ids it blocks)."""
    stack, seen = [start], set()
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return False
