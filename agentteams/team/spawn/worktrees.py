"""A teammate's own worktree: made at spawn (`isolation: "worktree"`, or the team-wide default) by git or by a
WorktreeCreate hook, recorded as its member entry's `worktreePath`, and released when it leaves (clean: removed)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentteams.backends import git
from agentteams.errors import AgentTeamsError
from agentteams.tools.base import ToolInputError
from agentteams.tools.team import worktree_git

if TYPE_CHECKING:
    from agentteams.agent.hooks.points import HookPoints
    from agentteams.agent.session import Session
    from agentteams.store.api import Store
    from agentteams.store.records import Member
    from agentteams.team.spawn.roster import Roster


def wanted(args: dict[str, Any], merged: dict[str, Any]) -> bool:
    """Whether this spawn gets a worktree: the call's `isolation`, else the settings' team-wide default."""
    asked = args.get("isolation", merged.get(worktree_git.ISOLATION_KEY))
    if asked in (None, "", "none"):
        return False
    if asked != "worktree":
        raise ToolInputError(f'isolation {asked!r} is not available for teammates: use "worktree" or leave it out')
    return True


def make(session: Session, team: str, name: str) -> tuple[Path, Path]:
    """The new worktree, and the directory in it the teammate starts in (the lead's subdirectory, if it works in
    one that the worktree has too)."""
    cwd = session.options.cwd
    try:
        repo = git.toplevel(cwd)
        if repo is None:
            raise ToolInputError(f'isolation: "worktree" needs a git repository, and {cwd} is not in one')
        if session.hooks.active("WorktreeCreate"):  # Claude Code's contract: the hook makes it, not git
            made, why = session.hooks.worktree_create(name)
            if made is None:
                raise ToolInputError(why)
            return (cwd / made).resolve(), (cwd / made).resolve()
        path = worktree_git.worktree_root(repo, session.options.settings) / team_subdir(team) / name
        branch = worktree_git.branch_for(team, name)
        if path.exists() or git.branch_exists(repo, branch):
            raise ToolInputError(
                f"{path} or branch {branch} is left from an earlier {name}: merge or remove it "
                "(agentteams merge, git worktree remove, git branch -D) or pick another name"
            )
        git.add_worktree(repo, path, branch, git.head(cwd))
        with contextlib.suppress(OSError, AgentTeamsError):  # the lead's `git status` stays clean
            if path.is_relative_to(repo):
                git.exclude(repo, "/" + path.parent.parent.relative_to(repo).as_posix() + "/")
    except git.GitError as e:
        raise ToolInputError(f"could not make a worktree for {name}: {e}") from None
    start = path / cwd.resolve().relative_to(repo.resolve())
    return path, start if start.is_dir() else path


def team_subdir(team: str) -> str:
    return worktree_git.branch_for(team, "").rstrip("/")


def record(store: Store, team: str, name: str, tree: Path, start: Path) -> None:
    """The member entry says where it works: `worktreePath` (Claude Code's key) and its cwd."""
    store.teams.set_member_fields(team, name, worktree_path=str(tree), cwd=str(start))


def release(store: Store, hooks: HookPoints, team: str, member: Member | None) -> str:
    """A teammate that left: its clean worktree removed (branch kept with commits), a dirty one kept. One sentence
    for the lead's notice ("" when it had no worktree)."""
    if member is None or not member.worktree_path:
        return ""
    path = Path(member.worktree_path)
    try:
        tree = worktree_git.find_tree(store.teams, team, member.name, path)
    except AgentTeamsError:
        tree = None
    if tree is None or tree.path is None or tree.path.resolve() != path.resolve():
        return _release_hook_made(hooks, member.name, path)
    try:
        line, _kept = worktree_git.release(tree)
    except AgentTeamsError as e:
        return f" Could not remove its worktree {path}: {e}"
    return f" {line[0].upper()}{line[1:]}."


def _release_hook_made(hooks: HookPoints, name: str, path: Path) -> str:
    """A worktree a WorktreeCreate hook made goes through the WorktreeRemove hooks (kept when it has changes)."""
    if not path.is_dir():
        return ""
    with contextlib.suppress(AgentTeamsError):
        dirty = git.dirty_files(path) if git.toplevel(path) else []
        if dirty:
            return f" Kept {name}'s worktree {path}: {len(dirty)} uncommitted file(s)."
    if hooks.active("WorktreeRemove"):
        if hooks.worktree_remove(str(path)):
            return f" Removed {name}'s worktree {path} (WorktreeRemove hook)."
        return f" Kept {name}'s worktree {path}: the WorktreeRemove hook failed."
    try:  # no WorktreeRemove hook: git removes it if it is a worktree (Claude Code falls back the same way)
        git.remove_worktree(path, path)
    except AgentTeamsError:
        return f" Kept {name}'s worktree {path} (made by a hook; git cannot remove it)."
    return f" Removed {name}'s worktree {path}."


def own_worktree(session: Session, team: str, name: str, args: dict[str, Any], roster: Roster) -> Path | None:
    """At spawn: where the teammate starts when the call or the settings ask for a worktree (recorded in its entry),
    else None. A refusal frees the reserved name and entry."""
    try:
        if not wanted(args, session.options.settings.merged):
            return None
        tree, start = make(session, team, name)
        record(session.store, team, name, tree, start)
    except BaseException:
        roster.abandoned(name)
        session.store.teams.remove_member(team, name)
        raise
    return start


def drop(session: Session, team: str, name: str) -> None:
    """A worktree made for a teammate that then failed to start: removed if clean (a retry can make it again)."""
    with contextlib.suppress(AgentTeamsError, OSError):
        tree = worktree_git.find_tree(session.store.teams, team, name, session.options.cwd)
        if tree.path is not None:
            worktree_git.release(tree)
