"""`agentteams status [TEAM] [--json] [--all]`: each team's members (state, task, last message, usage) and task board.
The body is `cli/status_show.py`, which `main()` runs without typer for a plain command line."""

from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command()
def status(
    team: Annotated[str | None, typer.Argument(help="One team (default: every team).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (every task, always).")] = False,
    show_all: Annotated[bool, typer.Option("--all", help="List every task, however large the board.")] = False,
) -> None:
    """Show every team (or one): members with their state, task, last message and usage, then the task board.

    A member is dead when its process or its tmux pane is gone. A board of more than 200 tasks shows its counts,
    who works on what, the last completed tasks and the open ones; --all lists every task.
    """
    from agentteams.cli.status_show import StatusArgs, show

    show(StatusArgs(team, as_json, show_all))
