"""`agentteams respawn <id> | --all`: restart background sessions with their conversations (a new version's code)."""

from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def respawn(
    session: Annotated[str | None, typer.Argument(help="The session's id, or part of its name.")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every background session of ours that runs.")] = False,
) -> None:
    """Restart a background session (or all of them) so it runs this version of agentteams."""
    from agentteams.errors import AgentTeamsError
    from agentteams.run import background
    from agentteams.store.paths import Layout

    layout = Layout.from_env()
    if every == (session is not None):
        raise AgentTeamsError("respawn takes a session's id, or --all")
    chosen = [background.find(layout, session)] if session is not None else [
        row.job for row in background.listing(layout) if row.job.ours
    ]  # fmt: skip
    if session is not None:  # one: its failure is the command's one line
        background.respawn(layout, chosen[0])
        typer.echo(f"respawned {chosen[0].id}")
        return
    failed = 0
    for job in chosen:  # each is tried: one that cannot restart says so in its line and leaves the others be
        try:
            background.respawn(layout, job)
        except AgentTeamsError as e:  # it names the session
            failed += 1
            typer.echo(f"agentteams: error: {e}", err=True)
            continue
        except OSError as e:  # its record or tmux server could not be reached
            failed += 1
            typer.echo(f"agentteams: error: cannot restart {job.id}: {e.strerror or e}", err=True)
            continue
        typer.echo(f"respawned {job.id}")
    if failed:
        raise typer.Exit(1)
