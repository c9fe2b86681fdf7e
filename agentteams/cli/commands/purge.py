"""`agentteams purge [PATH] [--all]`: Claude Code's `claude purge`: delete a project's Claude Code data (transcripts,
task lists, debug logs, file history, its state-file entry) from this computer, after showing the plan and asking."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
NO_KEYBOARD = ("agentteams can't read the keyboard here: stdin is not a terminal.\nOr run without -i to confirm the "
               "whole list once; that [y/N] prompt reads stdin.\nStopped. Nothing was deleted.")  # fmt: skip


def _ask(question: str) -> bool:
    typer.echo(f"{question} [y/N] ", nl=False)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


@app.command(context_settings={"help_option_names": ["-h", "--help"]})
def purge(
    path: Annotated[str | None, typer.Argument(help="The project's folder.")] = None,
    every: Annotated[bool, typer.Option("--all", help="Delete data for every project (not with PATH).")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be deleted, delete nothing.")] = False,
    interactive: Annotated[bool, typer.Option("-i", "--interactive", help="Ask before deleting each item.")] = False,
    yes: Annotated[bool, typer.Option("-y", "--yes", help="Skip the confirmation prompt.")] = False,
) -> None:
    """Delete a project's Claude Code data (transcripts, tasks, file history, and its entry in ~/.claude.json) from
    this computer only."""
    from agentteams.settings import purge as plans
    from agentteams.store.paths import config_root

    if path is not None and every:
        raise _stop("Use either a path or --all, not both.")
    if path is None and not every:
        raise _stop("agentteams purge: name a project's folder (or --all): there is no project picker here")
    project = None if every else Path(path or ".").expanduser().resolve()
    items = plans.plan(project)
    root = config_root()
    if not items:
        raise _stop(f"No Claude Code project data found for {project} under {root}." if project
                    else f"No Claude Code project data found under {root}.")  # fmt: skip
    for note in plans.notes(project is not None):
        typer.echo(note, err=True)
    typer.echo(f"\nPurge plan for {project if project else 'all projects'}:\n")
    typer.echo("\n".join(item.label() for item in items))
    typer.echo("\n\nPurging deletes data only on this computer, not anything stored by Anthropic.")
    count = f"{len(items)} item(s)"
    if dry_run:
        typer.echo(f"Dry run: {count} would be deleted.")
        return
    if interactive:
        if not sys.stdin.isatty():
            raise _stop(NO_KEYBOARD)
        items = [item for item in items if _ask(f"Delete {item.target}?")]
    elif not yes and not _ask(f"Delete {count} {f'for {project}' if project else 'across all projects'} from this "
                              "computer? This can't be undone."):  # fmt: skip
        raise _stop("Stopped. Nothing was deleted.")
    done = plans.carry_out(items)
    where = f"for {project}" if project else "across all projects"
    typer.echo(f"Purged {done} item{'' if done == 1 else 's'} {where}.")


def _stop(line: str) -> typer.Exit:
    typer.echo(line, err=True)
    return typer.Exit(1)
