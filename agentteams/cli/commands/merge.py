"""`agentteams merge TEAM AGENT [--into BRANCH] [--squash]`: merge a teammate's worktree branch back; a conflict
names the files, aborts, and exits 1 with the tree exactly as it was."""

from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command()
def merge(
    team: Annotated[str, typer.Argument(help="The team.")],
    agent: Annotated[str, typer.Argument(help="The teammate whose branch to merge.")],
    into: Annotated[str | None, typer.Option("--into", help="The branch to merge into (default: the lead's).")] = None,
    squash: Annotated[bool, typer.Option("--squash", help="One commit instead of a merge commit.")] = False,
) -> None:
    """Merge a teammate's branch (isolation: worktree) into the lead's current branch or --into BRANCH."""
    from pathlib import Path

    from agentteams.store.opener import open_store
    from agentteams.tools.team import worktree_git

    tree = worktree_git.find_tree(open_store().teams, team, agent, Path.cwd())
    try:
        typer.echo(worktree_git.merge(tree, into, squash=squash))
    except worktree_git.MergeConflict as e:
        typer.echo(f"agentteams: error: {e}", err=True)
        for name in e.files:
            typer.echo(f"conflict: {name}")
        raise typer.Exit(1) from None
