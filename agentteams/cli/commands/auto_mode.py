"""`agentteams auto-mode`: Claude Code's `claude auto-mode`. agentteams has no auto-mode classifier (`auto` runs as
acceptEdits), so `config`, `defaults` and `critique` say so in one line; `reset` removes the `autoMode` section from
the user settings file, with claude's confirmation."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None, no_args_is_help=True,
                  help="Inspect or reset auto mode configuration (as `claude auto-mode`).")  # fmt: skip
ANY = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": ["-h", "--help"]}
NO_CLASSIFIER = ("agentteams has no auto-mode classifier (--permission-mode auto runs as acceptEdits), so it has no "
                 "auto-mode rules to show or critique")  # fmt: skip


def _no_classifier(word: str) -> None:
    @app.command(word, context_settings=ANY, help=f"`claude auto-mode {word}`: not available here; exits 1.")
    def command(ctx: typer.Context) -> None:
        typer.echo(f"agentteams auto-mode {word}: {NO_CLASSIFIER}", err=True)
        raise typer.Exit(1)


for _word in ("config", "defaults", "critique"):
    _no_classifier(_word)


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def reset(yes: Annotated[bool, typer.Option("-y", "--yes", help="Skip the confirmation prompt.")] = False) -> None:
    """Reset auto mode to its defaults by removing the autoMode section from your user settings file."""
    from agentteams.settings.load import paths_for
    from agentteams.settings.section import drop_section, read_section

    path = paths_for(Path.cwd())["user"]
    section = read_section(path, "autoMode")
    if section is None:
        typer.echo(f"Auto mode configuration is already at defaults \u2014 {path} has no autoMode section.")
        return
    typer.echo(f"This resets auto mode to its defaults by removing the autoMode section from {path}:")
    for key, value in section.items() if isinstance(section, dict) else ():
        count = len(value) if isinstance(value, list) else 1
        typer.echo(f"  - {key} ({count} {'entry' if count == 1 else 'entries'})")
    if not yes:
        typer.echo("Reset auto mode configuration to defaults? [y/N] ", nl=False)
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            typer.echo("Aborted.", err=True)
            raise typer.Exit(1)
    drop_section(path, "autoMode")
    typer.echo(f"Auto mode configuration reset to defaults \u2014 autoMode section removed from {path}.")
