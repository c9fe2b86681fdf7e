"""How tasks read as text: `#2 [pending] Write tests (alice)` lines and TaskGet's detail, as Claude Code prints them."""

from __future__ import annotations

from agentteams.store.records import Task


def task_line(task: Task, open_ids: set[str] | None = None) -> str:
    """`#2 [pending] Write tests (alice) [blocked by #1]`, as Claude Code's TaskList prints it; given the ids of
    the list's open tasks, only a blocker still open is shown (one completed or deleted blocks nothing)."""
    line = f"#{task.id} [{task.status}] {task.subject}"
    if task.owner:
        line += f" ({task.owner})"
    blockers = [b for b in task.blocked_by if open_ids is None or b in open_ids]
    if blockers:
        line += " [blocked by " + ", ".join(f"#{b}" for b in blockers) + "]"
    return line


def task_lines(tasks: list[Task]) -> list[str]:
    """A whole list's lines, each showing only the blockers still open in it."""
    open_ids = {t.id for t in tasks if not t.resolved}
    return [task_line(t, open_ids) for t in tasks]


def task_detail(task: Task) -> str:
    """`Task #2: Write tests` / `Status: pending` / ..., as Claude Code's TaskGet prints it."""
    lines = [f"Task #{task.id}: {task.subject}", f"Status: {task.status}"]
    if task.description:
        lines.append(f"Description: {task.description}")
    if task.owner:
        lines.append(f"Owner: {task.owner}")
    if task.blocked_by:
        lines.append("Blocked by: " + ", ".join(f"#{b}" for b in task.blocked_by))
    if task.blocks:
        lines.append("Blocks: " + ", ".join(f"#{b}" for b in task.blocks))
    return "\n".join(lines)
