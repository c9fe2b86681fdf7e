"""Teammate worktrees, fast: made at spawn (Task's `isolation`, the settings' default, a WorktreeCreate hook) and
recorded, refused outside git in one line, released at departure; merges that finish or leave the tree exactly as
it was; clean worktrees removed and dirty ones kept. Real git in scratch repositories; the lead in-process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentteams.agent.hooks.points import HookPoints
from agentteams.backends import git
from agentteams.errors import AgentTeamsError
from agentteams.settings.types import Settings
from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.tools.base import ToolInputError
from agentteams.tools.team import worktree_git
from tests.support.fake_model import FakeModel, text
from tests.support.hookscript import HookLab
from tests.support.runtime import TEAM, quick_polls, running_lead
from tests.support.wait import wait_until


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lead's team thread looks every 20 ms: closing a lead waits for its look (2 s each at the default)."""
    quick_polls(monkeypatch)


def sh(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          timeout=30).stdout  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    work.mkdir()
    sh(work, "init", "-q", "-b", "main")
    sh(work, "config", "user.name", "T")
    sh(work, "config", "user.email", "t@example.com")
    (work / "f.txt").write_text("a\nbase\nc\n")
    sh(work, "add", "f.txt")
    sh(work, "commit", "-qm", "base")
    return work


def branch_with(repo: Path, name: str, content: str, *, commit: bool = True) -> worktree_git.TeammateTree:
    """A teammate's tree as the lead makes it, with f.txt changed (and committed)."""
    path = repo / ".claude" / "worktrees" / TEAM / name
    branch = worktree_git.branch_for(TEAM, name)
    git.add_worktree(repo, path, branch, git.head(repo))
    (path / "f.txt").write_text(content)
    if commit:
        sh(path, "commit", "-qam", f"{name} edit")
    return worktree_git.TeammateTree(TEAM, name, repo, branch, path, git.branch_base(repo, branch))


def untouched(repo: Path, head: str) -> None:
    assert git.head(repo) == head
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert sh(repo, "status", "--porcelain", "--untracked-files=no") == ""


@pytest.mark.parametrize("squash", [False, True])
def test_a_conflicting_merge_is_aborted_and_the_tree_left_as_it_was(repo: Path, squash: bool) -> None:
    alice = branch_with(repo, "alice", "a\nALICE\nc\n")
    bob = branch_with(repo, "bob", "a\nBOB\nc\n")
    said = worktree_git.merge(alice, squash=squash)
    assert said.startswith("squash-merged" if squash else "merged") and "into main" in said
    head = git.head(repo)
    with pytest.raises(worktree_git.MergeConflict) as caught:
        worktree_git.merge(bob, squash=squash)
    assert caught.value.files == ["f.txt"] and "main is as it was" in str(caught.value)
    untouched(repo, head)
    assert (repo / "f.txt").read_text() == "a\nALICE\nc\n"
    parents = sh(repo, "log", "-1", "--format=%P").split()
    assert len(parents) == (1 if squash else 2)  # squash: one plain commit; else a merge commit


def test_merge_into_a_branch_no_checkout_has_leaves_the_lead_checkout_alone(repo: Path) -> None:
    sh(repo, "branch", "release")
    alice = branch_with(repo, "alice", "a\nALICE\nc\n")
    head = git.head(repo)
    assert "into release" in worktree_git.merge(alice, "release")
    untouched(repo, head)
    assert sh(repo, "show", "release:f.txt") == "a\nALICE\nc\n"
    assert [b for _p, b in git.worktrees(repo)] == ["main", "proj/alice"]  # the scratch checkout is gone
    assert "already has everything" in worktree_git.merge(alice, "release")


def test_merge_refuses_a_target_with_uncommitted_changes_and_its_own_branch(repo: Path) -> None:
    alice = branch_with(repo, "alice", "a\nALICE\nc\n")
    (repo / "f.txt").write_text("local edit\n")
    with pytest.raises(AgentTeamsError, match=r"uncommitted changes \(f\.txt\)"):
        worktree_git.merge(alice)
    assert (repo / "f.txt").read_text() == "local edit\n"
    with pytest.raises(AgentTeamsError, match="own branch"):
        worktree_git.merge(alice, "proj/alice")


def test_release_removes_clean_worktrees_and_keeps_dirty_ones(repo: Path) -> None:
    worked = branch_with(repo, "alice", "a\nALICE\nc\n")
    idle = branch_with(repo, "bob", "a\nbase\nc\n", commit=False)  # the same content: clean, no commits
    dirty = branch_with(repo, "carol", "a\nCAROL\nc\n", commit=False)
    line, kept = worktree_git.release(worked)
    assert not kept and "kept branch proj/alice (1 commit(s) to merge)" in line and not worked.path.exists()  # type: ignore[union-attr]
    line, kept = worktree_git.release(idle)
    assert not kept and not git.branch_exists(repo, "proj/bob")
    line, kept = worktree_git.release(dirty)
    assert kept and "kept carol's worktree" in line and "f.txt" in line and dirty.path.exists()  # type: ignore[union-attr]


def test_team_trees_state_and_close(repo: Path, layout: Layout) -> None:
    store = FileStore(layout)
    store.teams.create(TEAM, cwd=str(repo))
    branch_with(repo, "alice", "a\nALICE\nc\n")
    dirty = branch_with(repo, "bob", "a\nBOB\nc\n", commit=False)
    lines = {t.name: worktree_git.state(t).line(t) for t in worktree_git.team_trees(store.teams, TEAM, repo)}
    assert lines["alice"].startswith("proj/alice: 1 commit(s) ahead, clean")
    assert lines["bob"].startswith("proj/bob: 0 commit(s) ahead, 1 dirty file(s): f.txt")
    removed, kept = worktree_git.close_team(store.teams, TEAM, repo)
    assert len(removed) == 1 and "alice" in removed[0] and len(kept) == 1 and "bob" in kept[0]
    assert dirty.path is not None and dirty.path.exists()


def test_spawn_in_a_worktree_records_it_and_its_departure_removes_it(repo: Path, layout: Layout) -> None:
    (repo / "sub").mkdir()
    (repo / "sub" / "g.txt").write_text("g\n")
    sh(repo, "add", "sub")
    sh(repo, "commit", "-qm", "sub")
    with running_lead(layout, repo / "sub", FakeModel([], default=text("Noted."))) as rig:
        said = rig.runtime.spawn_teammate({"name": "alice", "prompt": "go", "isolation": "worktree"})
        assert "Spawned successfully" in said
        tree = repo / ".claude" / "worktrees" / TEAM / "alice"
        assert rig.spawner.spawned[-1].cwd == tree / "sub"  # the lead's subdirectory, in its own checkout
        member = rig.teams.read(TEAM).member("alice")
        assert member is not None and member.worktree_path == str(tree) and member.cwd == str(tree / "sub")
        assert git.current_branch(tree) == "proj/alice" and git.head(tree) == git.head(repo)
        assert sh(repo, "status", "--porcelain") == ""  # .claude/worktrees/ is excluded locally
        rig.approve_shutdown("alice")
        wait_until(lambda: "alice" not in rig.members(), 5, "alice to leave")
        wait_until(lambda: not tree.exists(), 5, "its clean worktree to go")
        wait_until(lambda: not git.branch_exists(repo, "proj/alice"), 5, "its branch to go (it has no commits)")


def test_spawn_outside_git_is_refused_in_one_line(tmp_path: Path, layout: Layout) -> None:
    with running_lead(layout, tmp_path, FakeModel([], default=text("Noted."))) as rig:
        with pytest.raises(ToolInputError) as caught:
            rig.runtime.spawn_teammate({"name": "alice", "prompt": "go", "isolation": "worktree"})
        assert str(caught.value) == f'isolation: "worktree" needs a git repository, and {tmp_path} is not in one'
        assert "alice" not in rig.members() and rig.spawner.spawned == []
        with pytest.raises(ToolInputError, match="not available"):
            rig.runtime.spawn_teammate({"name": "bob", "prompt": "go", "isolation": "remote"})


def test_the_team_default_and_the_root_come_from_the_settings(repo: Path, layout: Layout, tmp_path: Path) -> None:
    root = tmp_path / "elsewhere"
    with running_lead(layout, repo, FakeModel([], default=text("Noted."))) as rig:
        merged = {"teammateIsolation": "worktree", "teammateWorktreeRoot": str(root)}
        rig.runtime.session.options.settings = Settings(merged=merged)
        rig.runtime.spawn_teammate({"name": "alice", "prompt": "go"})
        assert rig.spawner.spawned[-1].cwd == root / TEAM / "alice"
        rig.runtime.spawn_teammate({"name": "bob", "prompt": "go", "isolation": "none"})  # the call wins
        assert rig.spawner.spawned[-1].cwd == repo


def test_worktree_hooks_make_and_remove_it(repo: Path, layout: Layout, tmp_path: Path) -> None:
    lab = HookLab(tmp_path / "hooks")
    made = tmp_path / "hook-made"
    made.mkdir()
    lab.answer({"event": "WorktreeCreate", "when": '"bob"', "stderr": "no room", "exit": 1},
               {"event": "WorktreeCreate", "stdout": f"{made}\n"})  # fmt: skip
    settings = Settings(hooks=lab.settings({"WorktreeCreate": "", "WorktreeRemove": ""}))
    with running_lead(layout, repo, FakeModel([], default=text("Noted."))) as rig:
        session = rig.runtime.session
        session.hooks = HookPoints.build(settings, cwd=repo, session_id="s", transcript_path="",
                                         permission_mode=lambda: "default")  # fmt: skip
        rig.runtime.spawn_teammate({"name": "alice", "prompt": "go", "isolation": "worktree"})
        assert rig.spawner.spawned[-1].cwd == made
        created = lab.entries("WorktreeCreate")[0]["payload"]
        assert (created["hook_event_name"], created["name"], created["cwd"]) == ("WorktreeCreate", "alice", str(repo))
        assert not git.branch_exists(repo, "proj/alice")  # the hook made it: git did nothing
        with pytest.raises(ToolInputError, match=r"WorktreeCreate hook failed: .*exited 1: no room"):
            rig.runtime.spawn_teammate({"name": "bob", "prompt": "go", "isolation": "worktree"})
        assert "bob" not in rig.members()
        rig.approve_shutdown("alice")
        wait_until(lambda: bool(lab.entries("WorktreeRemove")), 5, "the WorktreeRemove hook")
        assert lab.entries("WorktreeRemove")[0]["payload"]["worktree_path"] == str(made)


def test_a_teammate_that_fails_to_start_leaves_no_worktree(repo: Path, layout: Layout) -> None:
    with running_lead(layout, repo, FakeModel([], default=text("Noted."))) as rig:
        real = rig.spawner.spawn

        def broken(req: object) -> object:
            raise OSError("no pane")

        rig.spawner.spawn = broken  # type: ignore[method-assign,assignment]
        with pytest.raises(ToolInputError, match="Could not start alice"):
            rig.runtime.spawn_teammate({"name": "alice", "prompt": "go", "isolation": "worktree"})
        assert not (repo / ".claude" / "worktrees" / TEAM / "alice").exists()
        assert not git.branch_exists(repo, "proj/alice")
        rig.spawner.spawn = real  # type: ignore[method-assign]
        assert "Spawned successfully" in rig.runtime.spawn_teammate(
            {"name": "alice", "prompt": "go", "isolation": "worktree"}
        )


@pytest.mark.parametrize("squash", [False, True])
def test_a_merge_works_on_a_machine_without_a_git_identity(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, squash: bool
) -> None:
    """git refused ("unable to auto-detect email address"): the merge commit is then agentteams', named as such."""
    alice = branch_with(repo, "alice", "a\nALICE\nc\n")
    sh(repo, "config", "--unset", "user.name")
    sh(repo, "config", "--unset", "user.email")
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    for name in ("EMAIL", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.delenv(name, raising=False)
    said = worktree_git.merge(alice, squash=squash)
    assert "into main" in said and (repo / "f.txt").read_text() == "a\nALICE\nc\n"
    assert sh(repo, "log", "-1", "--format=%an <%ae>").strip() == "agentteams <agentteams@localhost>"
