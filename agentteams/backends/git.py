"""Git, through `git` subprocesses with a deadline on every call: the one module that runs git. Worktrees for
teammates, their status, a branch's diff, and merges that either finish or leave the tree exactly as it was."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from agentteams.errors import AgentTeamsError

TIMEOUT = 30.0  # seconds for one git call: a hung git (a lock, a network filesystem) must not hang a lead
BASE_KEY = "agentteamsbase"  # `branch.<name>.agentteamsbase`: the commit a teammate's branch started from


class GitError(AgentTeamsError):
    """A git call that failed or ran past its deadline; the message is one line."""


@dataclass(frozen=True)
class MergeOutcome:
    """What a merge did: merged (with the new HEAD), nothing to merge, or conflicts (the tree left as before)."""

    merged: bool
    head: str = ""
    conflicts: list[str] = field(default_factory=list)
    up_to_date: bool = False


def run(
    cwd: Path, *args: str, timeout: float = TIMEOUT, check: bool = True, env_extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`git -C cwd ARGS`, never prompting; a failure (with `check`) or a timeout is one GitError line."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_EDITOR": "true", "GIT_MERGE_AUTOEDIT": "no",
           **(env_extra or {})}  # fmt: skip
    try:
        proc = subprocess.run(
            ["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=timeout, env=env, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish within {timeout:g}s in {cwd}") from None
    except OSError as e:
        raise GitError(f"could not run git: {e.strerror or e}") from None
    if check and proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise GitError(f"git {args[0]} failed in {cwd}: {said[-1] if said else f'exit {proc.returncode}'}")
    return proc


def toplevel(path: Path) -> Path | None:
    """The root of the checkout `path` is in, or None outside any git repository."""
    if not path.is_dir():
        return None
    proc = run(path, "rev-parse", "--show-toplevel", check=False)
    return Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None


def head(checkout: Path) -> str:
    """The commit checked out, or a GitError (a repository with no commit yet has none)."""
    proc = run(checkout, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
    if proc.returncode != 0:
        raise GitError(f"{checkout} has no commit yet: commit something before teammates branch from it")
    return proc.stdout.strip()


def current_branch(checkout: Path) -> str | None:
    """The branch checked out, or None when HEAD is detached."""
    proc = run(checkout, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    return proc.stdout.strip() or None


def branch_exists(repo: Path, branch: str) -> bool:
    return run(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False).returncode == 0


def valid_branch(repo: Path, branch: str) -> bool:
    return run(repo, "check-ref-format", "--branch", branch, check=False).returncode == 0


def add_worktree(repo: Path, path: Path, branch: str, base: str) -> None:
    """A new worktree at `path` on a new `branch` from `base`, which is remembered as the branch's start."""
    path.parent.mkdir(parents=True, exist_ok=True)
    run(repo, "worktree", "add", "-q", "-b", branch, str(path), base)
    run(repo, "config", f"branch.{branch}.{BASE_KEY}", base)


def exclude(repo: Path, pattern: str) -> None:
    """Have the repository ignore `pattern` (its own info/exclude: no tracked file changes)."""
    common = Path(run(repo, "rev-parse", "--git-common-dir").stdout.strip())
    path = (common if common.is_absolute() else repo / common) / "info" / "exclude"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if pattern not in text.splitlines():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + ("" if not text or text.endswith("\n") else "\n") + pattern + "\n", encoding="utf-8")


def branch_base(repo: Path, branch: str) -> str | None:
    """The commit `branch` was made from (by `add_worktree`), if recorded."""
    proc = run(repo, "config", "--get", f"branch.{branch}.{BASE_KEY}", check=False)
    return proc.stdout.strip() or None


def dirty_files(checkout: Path, *, untracked: bool = True) -> list[str]:
    """Files changed, staged or (with `untracked`) untracked and not ignored, in a checkout."""
    out = run(checkout, "status", "--porcelain=v1", "-z", f"--untracked-files={'all' if untracked else 'no'}").stdout
    names, entries = [], out.split("\0")
    skip = False
    for entry in entries:
        if skip or len(entry) < 4:
            skip = False
            continue
        names.append(entry[3:])
        skip = entry[0] in "RC"  # a rename's source follows as its own entry
    return names


def ahead(repo: Path, base: str, branch: str) -> int:
    """Commits on `branch` that `base` does not have."""
    return int(run(repo, "rev-list", "--count", f"{base}..refs/heads/{branch}").stdout.strip() or 0)


def worktrees(repo: Path) -> list[tuple[Path, str | None]]:
    """Every worktree of the repository: its path and its branch (None when detached)."""
    found: list[tuple[Path, str | None]] = []
    for block in run(repo, "worktree", "list", "--porcelain").stdout.split("\n\n"):
        lines = dict(line.split(" ", 1) for line in block.splitlines() if " " in line)
        if "worktree" in lines:
            ref = lines.get("branch")
            found.append((Path(lines["worktree"]), ref.removeprefix("refs/heads/") if ref else None))
    return found


def remove_worktree(repo: Path, path: Path) -> None:
    """Remove a clean worktree (git itself refuses a dirty one: no --force, ever)."""
    run(repo, "worktree", "remove", str(path))


def delete_branch(repo: Path, branch: str) -> None:
    run(repo, "branch", "-D", branch)


def diff(repo: Path, base: str, branch: str, *, stat: bool = False) -> str:
    """What `branch` changed since it left `base` (three dots: the other side's later work is not shown)."""
    return run(repo, "diff", *(["--stat"] if stat else []), f"{base}...refs/heads/{branch}").stdout


def merge(checkout: Path, branch: str, *, squash: bool, message: str) -> MergeOutcome:
    """Merge `branch` into what `checkout` has checked out. On a conflict the merge is aborted and the conflicting
    files named: the checkout ends exactly as it began (the caller checked it had no changes)."""
    before = head(checkout)
    args = ["merge", "--squash", branch] if squash else ["merge", "--no-ff", "--no-edit", "-m", message, branch]
    who = _committer(checkout)
    proc = run(checkout, *args, check=False, timeout=TIMEOUT * 4, env_extra=who)
    if proc.returncode != 0:
        conflicts = run(checkout, "diff", "--name-only", "--diff-filter=U").stdout.split()
        # --squash leaves no MERGE_HEAD for `merge --abort`: reset --merge undoes both kinds
        run(checkout, "reset", "-q", "--merge", before)
        if not conflicts:
            said = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
            raise GitError(f"git merge of {branch} failed: {said[-1] if said else f'exit {proc.returncode}'}")
        return MergeOutcome(False, before, conflicts)
    if squash:
        if not run(checkout, "diff", "--cached", "--name-only").stdout.strip():
            return MergeOutcome(False, before, up_to_date=True)
        run(checkout, "commit", "-q", "-m", message, env_extra=who)
    after = head(checkout)
    return MergeOutcome(after != before, after, up_to_date=after == before)


def _committer(checkout: Path) -> dict[str, str]:
    """Who the merge commit is by: the person's git identity; on a machine that has none (git would refuse with
    "unable to auto-detect email address"), agentteams, named as such."""
    if os.environ.get("GIT_COMMITTER_EMAIL") or os.environ.get("EMAIL"):
        return {}
    if run(checkout, "config", "user.email", check=False).stdout.strip():
        return {}
    return {f"GIT_{who}_{what}": value for who in ("AUTHOR", "COMMITTER")
            for what, value in (("NAME", "agentteams"), ("EMAIL", "agentteams@localhost"))}  # fmt: skip


def add_temporary_worktree(repo: Path, path: Path, branch: str) -> None:
    """A worktree with an existing branch checked out (a merge into a branch no checkout has)."""
    run(repo, "worktree", "add", "-q", str(path), branch)


def force_remove_worktree(repo: Path, path: Path) -> None:
    """Only for a temporary worktree of ours whose work is committed (a merge's scratch checkout)."""
    run(repo, "worktree", "remove", "--force", str(path))
