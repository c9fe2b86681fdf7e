"""Teammates' worktrees as git sees them: where each lives and on which branch, its state (commits ahead, dirty
files), its diff, merging it back (aborted on a conflict), and removing clean ones (a dirty one is kept and said)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentteams.backends import git
from agentteams.errors import AgentTeamsError, NotFoundError
from agentteams.store.api import Teams
from agentteams.store.paths import team_dir_name
from agentteams.store.records import TeamConfig

if TYPE_CHECKING:
    from agentteams.settings.types import Settings  # for a hint: `status` lists trees without loading settings

ROOT_KEY = "teammateWorktreeRoot"  # settings: where teammates' worktrees go (default <repo>/.claude/worktrees)
ISOLATION_KEY = "teammateIsolation"  # settings: "worktree" gives every teammate its own unless the spawn says
DEFAULT_ROOT = Path(".claude") / "worktrees"


class MergeConflict(AgentTeamsError):
    """A merge that would conflict: aborted, the target as it was; `files` are the conflicting paths."""

    def __init__(self, message: str, files: list[str]) -> None:
        super().__init__(message)
        self.files = files


@dataclass
class TeammateTree:
    """A teammate's branch in the lead's repository, its worktree (None once removed) and where it started."""

    team: str
    name: str
    repo: Path
    branch: str
    path: Path | None = None
    base: str | None = None


@dataclass
class TreeState:
    ahead: int
    dirty: list[str] = field(default_factory=list)

    def line(self, tree: TeammateTree) -> str:
        where = str(tree.path) if tree.path else "worktree removed"
        dirt = f"{len(self.dirty)} dirty file(s): {', '.join(self.dirty[:5])}" if self.dirty else "clean"
        return f"{tree.branch}: {self.ahead} commit(s) ahead, {dirt} ({where})"


def branch_for(team: str, name: str) -> str:
    """A teammate's branch: named after its team and itself."""
    return f"{team_dir_name(team)}/{name}"


def worktree_root(repo: Path, settings: Settings) -> Path:
    configured = settings.merged.get(ROOT_KEY)
    root = Path(configured).expanduser() if isinstance(configured, str) and configured.strip() else DEFAULT_ROOT
    return root if root.is_absolute() else repo / root


def lead_repo(config: TeamConfig | None, fallback: Path) -> Path:
    """The repository the team's lead works in (its recorded cwd), else the one `fallback` is in."""
    lead = config.member(config.lead_agent_id) if config is not None else None
    place = Path(lead.cwd) if lead is not None and lead.cwd else fallback  # not another repo the caller is in
    top = git.toplevel(place)
    if top is None:
        raise AgentTeamsError(f"{place} is not in a git repository: teammates' worktrees live in one")
    return top


def find_tree(teams: Teams, team: str, name: str, fallback: Path) -> TeammateTree:
    """A teammate's tree, from the team's config when it is still there, else from git alone."""
    config = None
    with contextlib.suppress(NotFoundError):
        config = teams.read(team)
    repo = lead_repo(config, fallback)
    branch = branch_for(config.name if config else team, name)
    if not git.branch_exists(repo, branch):
        member = config.member(name) if config else None
        made = member.worktree_path if member is not None else None
        branch = (git.current_branch(Path(made)) if made and Path(made).is_dir() else None) or ""
        if not branch:
            raise NotFoundError(f"{name} of team {team} has no worktree branch (spawned without isolation: worktree?)")
    path = next((p for p, b in git.worktrees(repo) if b == branch), None)
    return TeammateTree(team, name, repo, branch, path, git.branch_base(repo, branch))


def state(tree: TeammateTree, into: str | None = None) -> TreeState:
    """Commits the branch has that `into` (or its start) lacks, and its worktree's uncommitted files."""
    base = into or tree.base or "HEAD"
    dirty = git.dirty_files(tree.path) if tree.path is not None and tree.path.is_dir() else []
    return TreeState(git.ahead(tree.repo, base, tree.branch), dirty)


def diff(tree: TeammateTree, into: str | None = None) -> str:
    """The branch's changes since it left `into` (default the lead's checkout), and any uncommitted files."""
    target = into or git.current_branch(tree.repo) or "HEAD"
    text = git.diff(tree.repo, target, tree.branch)
    dirty = state(tree, target).dirty
    if dirty:
        text += f"\n# not committed in {tree.path} (a merge leaves these out): {', '.join(dirty)}\n"
    return text or f"{tree.branch} has no changes against {target}\n"


def merge(tree: TeammateTree, into: str | None = None, *, squash: bool = False) -> str:
    """Merge the teammate's branch into `into` (default: the lead's checked-out branch) and say what happened; a
    conflict raises MergeConflict with the tree exactly as before."""
    target = into or git.current_branch(tree.repo)
    if target is None:
        raise AgentTeamsError(f"{tree.repo} has a detached HEAD: name the branch to merge into (--into)")
    if target == tree.branch:
        raise AgentTeamsError(f"{tree.branch} is the teammate's own branch: merge it into another")
    if not git.branch_exists(tree.repo, target):
        raise NotFoundError(f"no branch named {target!r} in {tree.repo}")
    checkout = next((p for p, b in git.worktrees(tree.repo) if b == target), None)
    if checkout is not None:
        return _merge_in(tree, checkout, target, squash)
    scratch = Path(tempfile.mkdtemp(prefix="agentteams-merge-")) / "tree"
    git.add_temporary_worktree(tree.repo, scratch, target)
    try:
        return _merge_in(tree, scratch, target, squash)
    finally:
        with contextlib.suppress(AgentTeamsError):
            git.force_remove_worktree(tree.repo, scratch)
        shutil.rmtree(scratch.parent, ignore_errors=True)


def _merge_in(tree: TeammateTree, checkout: Path, target: str, squash: bool) -> str:
    changed = git.dirty_files(checkout, untracked=False)
    if changed:
        raise AgentTeamsError(f"{checkout} ({target}) has uncommitted changes ({', '.join(changed[:5])}): "
                              "commit or stash them before merging")  # fmt: skip
    how = "squash-merge" if squash else "merge"
    message = f"{'Squash-merge' if squash else 'Merge'} {tree.branch} ({tree.name} of team {tree.team})"
    outcome = git.merge(checkout, tree.branch, squash=squash, message=message)
    if outcome.conflicts:
        raise MergeConflict(
            f"{how} of {tree.branch} into {target} conflicts in {', '.join(outcome.conflicts)}: aborted, "
            f"{target} is as it was (have {tree.name} rebase onto {target}, or merge it by hand)",
            outcome.conflicts,
        )
    if outcome.up_to_date:
        return f"{target} already has everything on {tree.branch}: nothing to merge"
    return f"{how}d {tree.branch} into {target} (now {outcome.head[:12]})"


def release(tree: TeammateTree) -> tuple[str, bool]:
    """Remove a clean worktree (its branch kept when it has commits, else deleted); keep a dirty one. What was
    done, and whether it was kept (a warning for the person)."""
    if tree.path is None or not tree.path.is_dir():
        return f"{tree.name}'s worktree is already gone", False
    dirty = git.dirty_files(tree.path)
    if dirty:
        shown = ", ".join(dirty[:5]) + (" ..." if len(dirty) > 5 else "")
        return (f"kept {tree.name}'s worktree {tree.path}: {len(dirty)} uncommitted file(s) ({shown}); "
                f"commit them on {tree.branch} or remove it by hand"), True  # fmt: skip
    git.remove_worktree(tree.repo, tree.path)
    commits = git.ahead(tree.repo, tree.base, tree.branch) if tree.base else 1
    if commits == 0:
        git.delete_branch(tree.repo, tree.branch)
        return f"removed {tree.name}'s worktree and its branch {tree.branch} (no commits)", False
    return f"removed {tree.name}'s worktree; kept branch {tree.branch} ({commits} commit(s) to merge)", False


def team_trees(teams: Teams, team: str, fallback: Path) -> list[TeammateTree]:
    """Every teammate worktree of the team git knows (members gone or not)."""
    config = None
    with contextlib.suppress(NotFoundError):
        config = teams.read(team)
    try:
        repo = lead_repo(config, fallback)
    except AgentTeamsError:
        return []
    prefix = branch_for(config.name if config else team, "")
    return [TeammateTree(team, b[len(prefix):], repo, b, p, git.branch_base(repo, b))
            for p, b in git.worktrees(repo) if b and b.startswith(prefix)]  # fmt: skip


def close_team(teams: Teams, team: str, fallback: Path) -> tuple[list[str], list[str]]:
    """Before a team is deleted: its clean worktrees removed, dirty ones kept. (What was done, what was kept.)"""
    done: list[str] = []
    kept: list[str] = []
    for tree in team_trees(teams, team, fallback):
        try:
            line, dirty = release(tree)
        except AgentTeamsError as e:
            line, dirty = f"could not remove {tree.name}'s worktree {tree.path}: {e}", True
        (kept if dirty else done).append(line)
    return done, kept
