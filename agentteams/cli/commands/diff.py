"""`agentteams diff TEAM AGENT [--into BRANCH] [--stat]`: what a teammate's worktree branch changed, to review
before `agentteams merge`."""

from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)


@app.command()
def diff(
    team: Annotated[str, typer.Argument(help="The team.")],
    agent: Annotated[str, typer.Argument(help="The teammate whose branch to show.")],
    into: Annotated[str | None, typer.Option("--into", help="Compare with this branch (default: the lead's).")] = None,
    stat: Annotated[bool, typer.Option("--stat", help="Only the files changed and how much.")] = False,
) -> None:
    """Show a teammate's branch's changes since it left the lead's branch, and files it left uncommitted."""
    from pathlib import Path

    from agentteams.backends import git
    from agentteams.store.opener import open_store
    from agentteams.tools.team import worktree_git

    tree = worktree_git.find_tree(open_store().teams, team, agent, Path.cwd())
    if stat:
        target = into or git.current_branch(tree.repo) or "HEAD"
        typer.echo(git.diff(tree.repo, target, tree.branch, stat=True).rstrip() or f"{tree.branch}: no changes")
        typer.echo(worktree_git.state(tree, target).line(tree))
        return
    typer.echo(worktree_git.diff(tree, into), nl=False)
