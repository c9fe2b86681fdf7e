"""`agentteams team ...`: create, show, list and delete teams from a shell."""

from typing import TYPE_CHECKING, Annotated

import typer

from agentteams.cli.output import emit_json, team_text
from agentteams.inert_text import inert

if TYPE_CHECKING:
    from agentteams.store.api import Teams


def _store() -> "Teams":
    from agentteams.store.opener import open_store  # loaded per command: start-up stays at typer's own cost

    return open_store().teams


app = typer.Typer(help="Create, inspect and delete teams.", no_args_is_help=True, rich_markup_mode=None)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@app.command()
def create(
    name: str,
    description: Annotated[str | None, typer.Option("--description", "-d")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a team (a name already taken gets a -2, -3, ... suffix)."""
    config = _store().create(name, description=description)
    if as_json:
        emit_json(config.to_json())
    else:
        typer.echo(config.name)


@app.command()
def show(name: str, as_json: JsonOpt = False) -> None:
    """Show a team's config and members."""
    config = _store().read(name)
    if as_json:
        emit_json(config.to_json())
    else:
        typer.echo(team_text(config))


@app.command("list")
def list_(as_json: JsonOpt = False) -> None:
    """List every team; an unreadable config is reported, not hidden."""
    from agentteams.errors import CorruptFileError

    entries = _store().list_teams()
    if as_json:
        emit_json([e.to_json() if not isinstance(e, CorruptFileError) else {"error": str(e)} for e in entries])
        return
    for e in entries:
        if isinstance(e, CorruptFileError):
            typer.echo(inert(f"(unreadable) {e}"))
        else:
            typer.echo(inert(f"{e.name}\t{len(e.members)} member(s)\t{e.description or ''}".rstrip()))


@app.command()
def delete(
    name: str, force: Annotated[bool, typer.Option("--force", help="Delete even with members left.")] = False
) -> None:
    """Delete a team, its task list and clean teammate worktrees (a dirty one is kept); refuses while teammates
    remain."""
    from pathlib import Path

    from agentteams.errors import CorruptFileError
    from agentteams.store.opener import open_store
    from agentteams.tools.team import worktree_git

    store = open_store()
    removed: list[str] = []
    kept: list[str] = []
    try:
        config = store.teams.read(name)  # no such team: one line before any worktree is touched
    except CorruptFileError:
        if not force:
            raise
    else:
        if not force and any(m.agent_id != config.lead_agent_id for m in config.members):
            store.teams.delete(name)  # refuses (teammates remain), worktrees untouched
        removed, kept = worktree_git.close_team(store.teams, name, Path.cwd())
    for line in removed:
        typer.echo(line)
    for warning in kept + store.teams.delete(name, force=force):
        typer.echo(f"agentteams: warning: {warning}", err=True)
    typer.echo(f"deleted {name}")


@app.command()
def export(name: str) -> None:
    """Write a running team out as a team file (roles, tasks, the lead's instructions): agentteams launch re-runs it."""
    from agentteams.store.opener import open_store
    from agentteams.team.teamfile.export import export_team

    store = open_store()
    config = store.teams.read(name)
    typer.echo(export_team(config, store.tasks.list_tasks(config.name)), nl=False)
