"""`agentteams task ...`: the shared task list from a shell."""

from typing import TYPE_CHECKING, Annotated, cast

import typer

from agentteams.cli.output import emit_json, task_detail, task_lines
from agentteams.errors import InvalidNameError, NotFoundError

if TYPE_CHECKING:
    from agentteams.store.api import Tasks
    from agentteams.store.records import TaskStatus

app = typer.Typer(help="Create, update, claim and list tasks.", no_args_is_help=True, rich_markup_mode=None)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _store_team(team: str) -> "tuple[Tasks, str]":
    """The store and canonical team name; refuses a name that is neither a team nor a task list."""
    from agentteams.store.opener import open_store  # loaded per command: start-up stays at typer's own cost

    store = open_store()
    name = store.canonical(team)
    # a task list may outlive its team (the real CLI keeps tasks/<team>/), so either one will do
    if not store.tasks.has_list(name) and not store.teams.exists(name):
        raise NotFoundError(f"no team or task list named {team!r}")
    return store.tasks, name


@app.command()
def create(
    team: str,
    subject: str,
    description: Annotated[str, typer.Option("--description", "-d")] = "",
    blocked_by: Annotated[list[str] | None, typer.Option("--blocked-by", help="A blocking task id.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a task; prints its id."""
    store, team = _store_team(team)
    task = store.create(team, subject, description, blocked_by=blocked_by or [])
    if as_json:
        emit_json(task.to_json())
    else:
        typer.echo(task.id)


@app.command("list")
def list_(team: str, as_json: JsonOpt = False) -> None:
    """List tasks in id order."""
    store, team = _store_team(team)
    tasks = store.list_tasks(team)
    if as_json:
        emit_json([t.to_json() for t in tasks])
    else:
        for line in task_lines(tasks):
            typer.echo(line)


@app.command()
def get(team: str, task_id: str, as_json: JsonOpt = False) -> None:
    """Show one task."""
    store, team = _store_team(team)
    task = store.get(team, task_id)
    if as_json:
        emit_json(task.to_json())
    else:
        typer.echo(task_detail(task))


@app.command()
def update(
    team: str,
    task_id: str,
    status: Annotated[str | None, typer.Option("--status", help="pending|in_progress|completed|deleted")] = None,
    owner: Annotated[str | None, typer.Option("--owner", help="New owner; '' clears it.")] = None,
    subject: Annotated[str | None, typer.Option("--subject")] = None,
    description: Annotated[str | None, typer.Option("--description", "-d")] = None,
    add_blocked_by: Annotated[list[str] | None, typer.Option("--add-blocked-by")] = None,
    add_blocks: Annotated[list[str] | None, typer.Option("--add-blocks")] = None,
    sender: Annotated[str, typer.Option("--from", help="Who assigns (for task_assignment).")] = "team-lead",
    as_json: JsonOpt = False,
) -> None:
    """Update a task; setting an owner sends them a task_assignment message."""
    from agentteams.store.api import UNSET
    from agentteams.store.records import TASK_STATUSES

    if status is not None and status not in TASK_STATUSES:
        raise InvalidNameError(f"status must be one of {', '.join(TASK_STATUSES)}, got {status!r}")
    store, team = _store_team(team)
    result = store.update(
        team, task_id, status=cast("TaskStatus | None", status),
        owner=UNSET if owner is None else owner, subject=subject, description=description,
        add_blocked_by=add_blocked_by or [], add_blocks=add_blocks or [], assigned_by=sender,
    )  # fmt: skip
    if as_json:
        emit_json({**result.task.to_json(), "updated": result.updated})
    elif result.updated:
        typer.echo(f"Updated task #{result.task.id} {', '.join(result.updated)}")
    else:
        typer.echo(f"Task #{result.task.id} unchanged")


@app.command()
def claim(
    team: str,
    task_id: Annotated[str | None, typer.Argument(help="Task id; omit to take the lowest claimable.")] = None,
    agent: Annotated[str, typer.Option("--agent", help="Who claims.")] = ...,  # type: ignore[assignment]
    check_busy: Annotated[bool, typer.Option("--check-busy", help="Refuse if the agent owns open work.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Claim a task for an agent; prints the id, or the reason and exits 1."""
    store, team = _store_team(team)
    if task_id is None:
        result = store.claim_next(team, agent, check_busy=check_busy)
    else:
        result = store.claim(team, task_id, agent, check_busy=check_busy)
    if as_json:
        emit_json({"success": result.success, "taskId": result.task.id if result.task else None,
                   "reason": result.reason, "busyWith": result.busy_with})  # fmt: skip
    elif result.success and result.task:
        typer.echo(result.task.id)
    else:
        typer.echo(result.reason, err=True)
    if not result.success:
        raise typer.Exit(1)


@app.command()
def delete(team: str, task_id: str) -> None:
    """Delete a task (its id is never reused)."""
    store, team = _store_team(team)
    store.delete(team, task_id)
    typer.echo(f"deleted task #{task_id}")
