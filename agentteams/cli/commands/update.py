"""`agentteams update | upgrade`: as a package-manager install of Claude Code does, say how to update through the
package manager (pip) that installed agentteams."""

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def update() -> None:
    """Check for updates: agentteams is installed with pip, and pip updates it."""
    import sys

    from agentteams import __version__

    typer.echo(f"Current version: {__version__}")
    typer.echo("agentteams is a Python package and does not update itself. To update it, run:")
    typer.echo(f"  {sys.executable} -m pip install --upgrade agentteams")
