"""`agentteams rm <id>`: take a background session that has ended off the list; its conversation is kept."""

from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def rm(session: Annotated[str, typer.Argument(help="The session's id, or part of its name.")]) -> None:
    """Remove a background session from the list (`agentteams -r` still lists its conversation)."""
    from agentteams.run import background
    from agentteams.store.paths import Layout

    layout = Layout.from_env()
    job = background.find(layout, session)
    if not job.ours:
        raise background.claude_only(job, "rm")
    background.remove(layout, job)
    typer.echo(f"removed {job.id}")
