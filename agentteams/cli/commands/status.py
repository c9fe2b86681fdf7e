"""`agentteams status [TEAM] [--json]`: each team's members (state, task, last message, usage) and task board."""

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agentteams.store.api import Store

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command()
def status(
    team: Annotated[str | None, typer.Argument(help="One team (default: every team).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show every team (or one): members with their state, task, last message and usage, then the task board.

    A member is dead when its process or its tmux pane is gone.
    """
    from agentteams.cli.output import emit_json
    from agentteams.errors import CorruptFileError
    from agentteams.store.opener import open_store
    from agentteams.team.status_view import PaneTable, build_view, read_configs

    store = open_store()
    configs = read_configs(store, team)  # one clear error for an unknown team, before asking tmux
    panes = PaneTable.probe()
    views = [c if isinstance(c, CorruptFileError) else build_view(store, c, panes) for c in configs]
    for v in views:
        if not isinstance(v, CorruptFileError):
            v.worktrees = _worktrees(store, v.name)
    if as_json:
        out = [{"error": str(v)} if isinstance(v, CorruptFileError) else v.to_json() for v in views]
        emit_json(out[0] if team is not None else out)
        return
    from agentteams.ui.console import command_console

    console = command_console()
    if console.is_terminal:
        from agentteams.ui.dashboard import rich_all

        console.print(rich_all(views))
        for v in views:  # the table has no room for them
            if not isinstance(v, CorruptFileError) and v.worktrees:
                typer.echo("\n".join([f"{v.name} worktrees", *(f"  {w}" for w in v.worktrees)]))
    else:
        from agentteams.ui.dashboard import plain_all

        typer.echo(plain_all(views))


def _worktrees(store: "Store", team: str) -> list[str]:
    """Each teammate branch of the team: commits ahead of where it began, and its worktree's dirty files."""
    from pathlib import Path

    from agentteams.errors import AgentTeamsError
    from agentteams.tools.team import worktree_git

    lines = []
    for tree in worktree_git.team_trees(store.teams, team, Path.cwd()):
        try:
            lines.append(f"{tree.name}  {worktree_git.state(tree).line(tree)}")
        except AgentTeamsError as e:
            lines.append(f"{tree.name}  {tree.branch}: {e}")
    return lines
