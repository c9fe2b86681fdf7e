"""Claude Code subcommands that cannot apply here (a cloud login, a native build, a hosted service, background
sessions not built yet): each prints one line saying so and exits 1, as claude does without that feature, and never
reaches the model."""

from __future__ import annotations

import typer

ANY_ARGS = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": ["-h", "--help"]}


def app_for(word: str, summary: str, line: str) -> typer.Typer:
    """A one-command app for `agentteams <word> ...` (any arguments) that says `line` on stderr and exits 1."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)

    @app.command(context_settings=ANY_ARGS, help=f"{summary} Not available in agentteams: says why and exits 1.")
    def command(ctx: typer.Context) -> None:
        typer.echo(f"agentteams {word}: {line}" if word else f"agentteams: {line}", err=True)
        raise typer.Exit(1)

    return app
