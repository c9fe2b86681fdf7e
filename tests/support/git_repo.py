"""A scratch git repository for worktree tests: on main, one file committed, an identity of its own (teammates
commit too)."""

from __future__ import annotations

import subprocess
from pathlib import Path

BASE = "line1\nbase\nline3\n"  # shared.txt as committed


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          timeout=30).stdout  # fmt: skip


def make_repo(tmp_path: Path) -> Path:
    """`tmp_path/work`, a repository on main with shared.txt committed."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    git(work, "config", "user.name", "Test")
    git(work, "config", "user.email", "test@example.com")
    (work / "shared.txt").write_text(BASE)
    git(work, "add", "shared.txt")
    git(work, "commit", "-qm", "base")
    return work
