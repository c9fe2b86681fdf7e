"""How tasks read as text: `#2 [pending] Write tests (alice)` lines and TaskGet's detail, as Claude Code prints them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from agentteams.store.records import Task


class Listed(Protocol):
    """What a task line shows: a `Task`, or a board view's `BoardTask`."""

    @property
    def id(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def owner(self) -> str | None: ...
    @property
    def blocked_by(self) -> list[str]: ...
    @property
    def resolved(self) -> bool: ...


# Claude Code 2.1.332 keeps a tool result inline up to 50 000 characters (TaskList asks 100 000, clamped to that);
# past it the result goes to a file and the model gets a 2 KB head of it: on a long-lived board, completed tasks
# only. Past the same size ours sends the counts and the open tasks instead, up to SUMMARY_CHARS (about 2 000
# tokens): the model's question on a board is what to do next, and a file outside the working directories is one
# a teammate's Read may not open without someone to ask.
FULL_LIST_CHARS = 50_000
SUMMARY_CHARS = 8_000


def task_line(task: Listed, open_ids: set[str] | None = None) -> str:
    """`#2 [pending] Write tests (alice) [blocked by #1]`, as Claude Code's TaskList prints it; given the ids of
    the list's open tasks, only a blocker still open is shown (one completed or deleted blocks nothing)."""
    line = f"#{task.id} [{task.status}] {task.subject}"
    if task.owner:
        line += f" ({task.owner})"
    blockers = [b for b in task.blocked_by if open_ids is None or b in open_ids]
    if blockers:
        line += " [blocked by " + ", ".join(f"#{b}" for b in blockers) + "]"
    return line


def task_lines(tasks: Sequence[Listed]) -> list[str]:
    """A whole list's lines, each showing only the blockers still open in it."""
    open_ids = {t.id for t in tasks if not t.resolved}
    return [task_line(t, open_ids) for t in tasks]


def task_list_text(tasks: list[Task]) -> str:
    """TaskList's text: every task's line (as Claude Code prints them), or past FULL_LIST_CHARS a summary."""
    lines = task_lines(tasks)
    whole = "\n".join(lines)
    return whole if len(whole) <= FULL_LIST_CHARS else _summary(tasks, lines, len(whole.encode()))


def _summary(tasks: list[Task], lines: list[str], size: int) -> str:
    """The counts by status, then the open tasks' lines as many as fit in SUMMARY_CHARS: those in progress (about one
    per teammate: who does what), then those ready to claim (the next picks), then the rest, each group in id order."""
    counts = Counter(t.status for t in tasks)
    open_ids = {t.id for t in tasks if not t.resolved}
    ready: list[int] = []
    working: list[int] = []
    waiting: list[int] = []
    for i, t in enumerate(tasks):
        if t.status == "in_progress":
            working.append(i)
        elif t.status == "pending":
            free = not t.owner and open_ids.isdisjoint(t.blocked_by)
            (ready if free else waiting).append(i)
    head = (
        f"{len(tasks)} tasks, too many to list whole ({size / 1024:.1f} KB): {counts['completed']} completed, "
        f"{counts['in_progress']} in progress, {counts['pending']} pending, {len(ready)} of them ready to claim. "
        "Completed tasks are left out. Open tasks follow: in progress, then ready to claim, then blocked or assigned, "
        "each group lowest id first. TaskGet shows any task by its id."
    )
    picks = [*working, *ready, *waiting]
    shown: list[str] = []
    used = len(head) + len(_more(len(picks))) + 1  # room kept for the last line
    for i in picks:
        if used + 1 + len(lines[i]) > SUMMARY_CHARS:
            break
        shown.append(lines[i])
        used += 1 + len(lines[i])
    left = len(picks) - len(shown)
    return "\n".join([head, *shown, *([_more(left)] if left else [])])


def _more(left: int) -> str:
    return f"... and {left} more open tasks, not shown"


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
