"""`agentteams status` itself, without typer: the typer command (`cli/commands/status.py`) and `main()`'s fast path
for a plain `status [TEAM] [--json] [--all]` both run `show`, so a look at a team pays neither typer (~60 ms) nor,
when piped, rich."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import dataclass

TYPE_CHECKING = False  # not typing's: importing typing costs ~3 ms on every command
if TYPE_CHECKING:
    from agentteams.store.api import Store

OPTIONS = ("--json", "--all")  # the whole option set of `status` (its typer command says so too)


@dataclass(frozen=True)
class StatusArgs:
    team: str | None
    as_json: bool = False
    show_all: bool = False


def parse(argv: list[str]) -> StatusArgs | None:
    """`status`'s arguments (after the word) when they read plainly; None for anything else (--help, an unknown
    option, a second team, `--`): typer reads those and says what is wrong in its words."""
    team: str | None = None
    for arg in argv:
        if arg in OPTIONS:
            continue
        if arg.startswith("-") or team is not None:
            return None
        team = arg
    return StatusArgs(team, "--json" in argv, "--all" in argv)


def show(args: StatusArgs) -> None:
    """Each team's members and task board (a large board summarised unless `show_all`; JSON always whole)."""
    from agentteams.errors import CorruptFileError
    from agentteams.store.opener import open_store
    from agentteams.team.status_view import PaneTable, build_view, read_configs

    store = open_store()
    configs = read_configs(store, args.team)  # one clear error for an unknown team, before asking tmux
    panes = PaneTable.probe()
    views = [c if isinstance(c, CorruptFileError) else build_view(store, c, panes) for c in configs]
    for v in views:
        if not isinstance(v, CorruptFileError):
            v.worktrees = _worktrees(store, v.name)
    if args.as_json:
        out = [{"error": str(v)} if isinstance(v, CorruptFileError) else v.to_json() for v in views]
        _write(json.dumps(out[0] if args.team is not None else out, indent=2, ensure_ascii=False))
        return
    if _may_be_terminal():  # rich (~30 ms to import) only where its styles can show
        from agentteams.ui.console import command_console

        console = command_console()
        if console.is_terminal:
            from agentteams.ui.dashboard import rich_all

            console.print(rich_all(views, show_all=args.show_all))
            for v in views:  # the table has no room for them
                if not isinstance(v, CorruptFileError) and v.worktrees:
                    _write("\n".join([f"{v.name} worktrees", *(f"  {w}" for w in v.worktrees)]))
            return
    from agentteams.ui.dashboard import plain_all

    _write(plain_all(views, show_all=args.show_all))


def _may_be_terminal() -> bool:
    """Whether rich could take stdout for a terminal: only then is it asked (its own test reads these same
    variables, then isatty)."""
    if os.environ.get("TTY_COMPATIBLE") == "1" or os.environ.get("FORCE_COLOR"):
        return True
    try:
        return sys.stdout.isatty()
    except ValueError:  # a closed stdout
        return False


def _write(text: str) -> None:
    with contextlib.suppress(BrokenPipeError):  # a reader that stopped early (`| head`): the rest is not wanted
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def _worktrees(store: Store, team: str) -> list[str]:
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
