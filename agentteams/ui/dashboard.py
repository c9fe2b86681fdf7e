"""How `status` and `watch` show teams: rich tables on a terminal, aligned plain text otherwise, and feed lines."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from agentteams.errors import CorruptFileError
from agentteams.inert_text import inert

if TYPE_CHECKING:
    from rich.table import Table

    from agentteams.team.status_view import FeedItem, MemberView, TaskView, TeamView
    from agentteams.ui.console import RenderableType

FEED_SIZE = 15  # feed lines `watch` keeps on screen
STATE_STYLE = {
    "working": "green", "idle": "dim", "awaiting_plan_approval": "yellow", "stopping": "yellow",
    "starting": "cyan", "dead": "bold red", "unknown": "dim", "unresponsive": "bold yellow", "gone": "dim",
}  # fmt: skip
RICH_COLOR = {"orange": "dark_orange", "pink": "hot_pink"}  # team colours rich does not know by that name
TASK_STYLE = {"in_progress": "green", "completed": "dim", "pending": ""}
COLUMNS = ("member", "role", "where", "state", "tool", "task", "usage", "context", "budget", "last message")
# a board (status, watch; terminal or piped) past this many tasks: the counts, who works on what, then the tasks most
# worth a look up to this many; every task with `status --all` and in `--json`. 10 000 lines took rich a second to
# draw and scrolled the members away, and piped they were most of a 10 000-task status's time.
BOARD_LINES = 200
RECENT_DONE = 5  # the last completed tasks a summary shows: what just finished


def state_text(state: str) -> str:
    return state.replace("_", " ")


def member_cells(view: TeamView, m: MemberView) -> list[str]:
    """One row of COLUMNS: `where` is the node (off the lead's machine), backend and pane, `state` with how long its
    turn has run, `tool` the one running, `usage` tokens in/out and cost, `context` how full its conversation is (of
    its model's window), `budget` how much of its budget is spent."""
    task = view.task(m.current_task)
    task_cell = f"#{m.current_task} {task.subject}" if task else (f"#{m.current_task}" if m.current_task else "-")
    where = " ".join(x for x in (f"node {m.node}" if m.node else None, m.backend, m.pane) if x) or "-"
    usage = f"{m.input_tokens}/{m.output_tokens} ${m.cost_usd or 0:.4f}" if m.input_tokens is not None else "-"
    context = f"{m.context_percent}%" if m.context_percent is not None else "-"
    budget = f"{m.budget_percent}%" if m.budget_percent is not None else "-"
    state = state_text(m.state) + (f" {_since(m.busy_since)}" if m.busy_since and m.state == "working" else "")
    cells = [m.name, m.role, where, state, m.current_tool or "-", task_cell, usage, context, budget]
    return [inert(c) for c in (*cells, m.last_message or "-")]  # names, subjects, messages: anyone's text


def _since(ms: int) -> str:
    """How long a turn has run: `42s`, `3m05s`."""
    secs = max(0, int(datetime.now().timestamp() - ms / 1000))
    return f"{secs}s" if secs < 60 else f"{secs // 60}m{secs % 60:02d}s"


def _header(view: TeamView) -> str:
    head = f"team {view.name}" + (f" — {inert(view.description)}" if view.description else "")
    if view.lead_gone:
        head += " — lead gone (resume it with agentteams -c)"
    return head + ("" if view.panes_known else "  (no tmux server reachable: pane liveness unknown)")


@dataclass
class BoardExcerpt:
    """What a board shows: every task, or past BOARD_LINES a head line with the counts and the tasks most worth a
    look (the last completed, those in progress, then the pending ones, each in id order) and how many are left."""

    head: str
    owners: str | None  # `in progress: alice 3, bob 1` (a summary only)
    tasks: list[TaskView]
    left: int = 0  # open tasks not shown


def board_excerpt(view: TeamView, *, show_all: bool = False) -> BoardExcerpt:
    tasks = view.tasks
    if not tasks:
        return BoardExcerpt("tasks: none", None, [])
    if show_all or len(tasks) <= BOARD_LINES:
        return BoardExcerpt("tasks", None, tasks)
    done: deque[TaskView] = deque(maxlen=RECENT_DONE)
    working: list[TaskView] = []
    waiting: list[TaskView] = []
    completed = 0
    for t in tasks:  # one pass: this is a board of thousands
        if t.status == "completed":
            completed += 1
            done.append(t)
        elif t.status == "in_progress":
            working.append(t)
        elif t.status == "pending":
            waiting.append(t)
    picks = [*done, *working, *waiting]
    owners = Counter(t.owner or "nobody" for t in working)
    head = (
        f"tasks: {len(tasks)}, {completed} completed, {len(working)} in progress, {len(waiting)} pending; "
        f"the last {len(done)} completed and the open ones (every task: agentteams status {view.name} --all, or "
        "--json)"
    )
    who = ", ".join(f"{name} {n}" for name, n in sorted(owners.items())) if owners else None
    return BoardExcerpt(inert(head), inert(f"in progress: {who}") if who else None, picks[:BOARD_LINES],
                        max(0, len(picks) - BOARD_LINES))  # fmt: skip


def _more(left: int) -> str:
    return f"... and {left} more open tasks"


def plain_team(view: TeamView, *, show_all: bool = False) -> str:
    """Aligned text for scripts and pipes: a header, one row per member, then the task board (a summary of a large
    one unless `show_all`)."""
    rows = [list(COLUMNS), *(member_cells(view, m) for m in view.members)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS) - 1)]
    lines = [_header(view)]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1] for r in rows]
    board = board_excerpt(view, show_all=show_all)
    lines += [board.head, *([f"  {board.owners}"] if board.owners else [])]
    lines += [f"  {inert(view.line(t))}" for t in board.tasks]
    lines += [f"  {_more(board.left)}"] if board.left else []
    lines += ["worktrees", *(f"  {w}" for w in view.worktrees)] if view.worktrees else []
    return "\n".join(line.rstrip() for line in lines)


def plain_all(views: list[TeamView | CorruptFileError], *, show_all: bool = False) -> str:
    if not views:
        return "no teams"
    shown = (
        inert(f"(unreadable team) {v}") if isinstance(v, CorruptFileError) else plain_team(v, show_all=show_all)
        for v in views
    )  # fmt: skip
    return "\n\n".join(shown)


def _color(name: str | None) -> str:
    return RICH_COLOR.get(name or "", name or "")


def members_table(view: TeamView) -> Table:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=_header(view), title_justify="left", title_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in COLUMNS:
        table.add_column(col, no_wrap=col in ("member", "state", "usage"))
    for m in view.members:
        cells = [Text(c) for c in member_cells(view, m)]  # Text: a cell like "[to bob] ..." is not markup
        cells[0].stylize(f"bold {_color(m.color)}".strip())
        cells[3].stylize(STATE_STYLE.get(m.state, ""))
        table.add_row(*cells)
    return table


def tasks_table(view: TeamView, *, show_all: bool = False) -> RenderableType:
    from rich.text import Text

    board = board_excerpt(view, show_all=show_all)
    if not board.tasks:
        return Text(board.head, style="dim")
    text = Text(board.head + "\n", style="bold")
    if board.owners:
        text.append(f"  {board.owners}\n")
    for t in board.tasks:
        text.append(f"  {inert(view.line(t))}\n", style=TASK_STYLE.get(t.status, ""))
    if board.left:
        text.append(f"  {_more(board.left)}\n", style="dim")
    text.rstrip()
    return text


def rich_all(views: list[TeamView | CorruptFileError], *, show_all: bool = False) -> RenderableType:
    from rich.text import Text

    from agentteams.ui.console import Group

    if not views:
        return Text("no teams", style="dim")
    parts: list[RenderableType] = []
    for v in views:
        if isinstance(v, CorruptFileError):
            parts.append(Text(inert(f"(unreadable team) {v}"), style="red"))
        else:
            parts += [members_table(v), tasks_table(v, show_all=show_all), Text("")]
    return Group(*parts)


def _clock(timestamp: str) -> str:
    try:
        return datetime.fromisoformat(timestamp).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return timestamp[:8]


def feed_line(item: FeedItem, *, with_team: bool = False, full_time: bool = False) -> str:
    """`12:00:01 alice → bob: [to bob] parser done` (the team first when several are shown)."""
    when = item.timestamp if full_time else _clock(item.timestamp)
    team = f"[{item.team}] " if with_team else ""
    return inert(f"{when} {team}{item.sender} → {item.recipient}: {item.label}")


def rich_feed(items: list[FeedItem], *, with_team: bool = False) -> RenderableType:
    from rich.text import Text

    text = Text("messages\n", style="bold")
    if not items:
        text.append("  (none yet)", style="dim")
    for item in items:
        text.append(f"  {_clock(item.timestamp)} ", style="dim")
        if with_team:
            text.append(f"[{item.team}] ")
        text.append(inert(item.sender), style=_color(item.color) or "bold")
        text.append(inert(f" → {item.recipient}: "))
        text.append(inert(item.label) + "\n", style="" if item.kind == "message" else "italic dim")
    text.rstrip()
    return text


def rich_dashboard(views: list[TeamView | CorruptFileError], feed: list[FeedItem]) -> RenderableType:
    from agentteams.ui.console import Group

    several = len(views) > 1
    return Group(rich_all(views), rich_feed(feed[-FEED_SIZE:], with_team=several))
