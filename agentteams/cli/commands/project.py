"""`agentteams project purge`: Claude Code 2.1.197's `claude project purge`, the same as `agentteams purge`."""

import typer

from agentteams.cli.commands.purge import purge

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None, no_args_is_help=True,
                  help="Manage Claude Code project state (as claude 2.1.197's `claude project`).")  # fmt: skip
app.command("purge", context_settings={"help_option_names": ["-h", "--help"]})(purge)


@app.callback()
def project() -> None:
    """Manage Claude Code project state (a group, even with one command)."""
