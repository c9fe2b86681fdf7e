"""`agentteams stop|kill <id>`: end a background session (its team taken down first); its conversation is kept."""

from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def stop(session: Annotated[str, typer.Argument(help="The session's id, or part of its name.")]) -> None:
    """Stop a background session; `agentteams respawn <id>` starts it again with its conversation."""
    from agentteams.run import background
    from agentteams.store.paths import Layout

    layout = Layout.from_env()
    job = background.find(layout, session)
    background.stop(layout, job)
    typer.echo(f"stopped {job.id}")
