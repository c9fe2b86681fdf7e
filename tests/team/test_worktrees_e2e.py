"""Issue 17's worktree acceptance, end to end in a scratch git repository (tmux and in-process): two teammates with
worktree isolation edit the same file at the same time on their own branches, neither sees the other's change; the
lead merges alice's and bob's conflicts (reported, the tree intact); TeamDelete keeps bob's dirty worktree and says
so; nothing a teammate did lands in the lead's checkout. Real processes, the real SDK, our scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from tests.support.cli import Cli
from tests.support.git_repo import git, make_repo
from tests.support.team_run import Run, assert_nothing_left, finish, lead_env, lead_in_tmux
from tests.support.team_script import REQUEST_ID, TEAM, say, tool, waiting
from tests.support.tmuxlab import Tmux


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A scratch repository on main with shared.txt committed (its own identity: teammates commit too)."""
    return make_repo(tmp_path)


def mate_routes(me: str, peer: str, dirty: bool) -> list[dict[str, Any]]:
    """Write its own version of line 2, tell the peer; once the peer wrote too, show the file and commit it."""
    shutdown = {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True}
    commit = f"cat shared.txt && git add -A && git commit -qm '{me} edit'" + (" && echo wip > wip.txt" if dirty else "")
    turns = [
        {**tool("Read", file_path="shared.txt"), "wait_for": "GO-ALL"},  # both are members by then
        tool("Write", file_path="shared.txt", content=f"line1\n{me.upper()}-LINE\nline3\n"),
        tool("SendMessage", to=peer, message=f"WROTE-{me}", summary="wrote"),
        {**tool("Bash", command=commit), "wait_for": f"WROTE-{peer}"},  # till then "Noted." ends its turn
        tool("SendMessage", to="team-lead", message=f"{me.upper()}-COMMITTED", summary="committed"),
        say("Committed."),
    ]
    system = f"Your name is {me}"
    return [
        {"name": f"{me}-shutdown", "match": {"system": system, "last_prompt": "shutdown_request"},
         "turns": [tool("SendMessage", to="team-lead", message=shutdown)] * 2},
        {"name": me, "match": {"system": system}, "turns": turns, "idle": "Noted."},
    ]  # fmt: skip


def scenario(isolation_field: bool) -> dict[str, Any]:
    extra = {"isolation": "worktree"} if isolation_field else {}  # else --teammate-isolation worktree says it
    lead = [
        tool("TeamCreate", team_name=TEAM),
        *(tool("Task", name=n, team_name=TEAM, description=n, prompt=f"You are {n}. START-{n}", **extra)
          for n in ("alice", "bob")),
        *(tool("SendMessage", to=n, message="GO-ALL", summary="go") for n in ("alice", "bob")),
        say("Started."),
        {**tool("TeamMerge", name="alice", review=True), "wait_for": ["ALICE-COMMITTED", "BOB-COMMITTED"]},
        tool("TeamMerge", name="alice"),
        tool("TeamMerge", name="bob"),
        *(tool("SendMessage", to=n, message={"type": "shutdown_request", "reason": "done"}) for n in ("alice", "bob")),
        waiting("Waiting."),
        {**tool("TeamDelete"), "wait_for": ["Teammate alice shut down", "Teammate bob shut down"]},
        say("LEAD-DONE"),
    ]  # fmt: skip
    lead_route = {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."}
    return {"routes": [*mate_routes("alice", "bob", False), *mate_routes("bob", "alice", True), lead_route]}


def tool_results(run: Run, route: str) -> list[str]:
    """Every tool result the route's agent sent back, in order (each request repeats the earlier ones: deduped)."""
    seen: list[str] = []
    for r in run.server.requests:
        if r.get("route") != route:
            continue
        for msg in r["body"]["messages"]:
            for block in msg["content"] if isinstance(msg["content"], list) else []:
                if block.get("type") == "tool_result":
                    text = json.dumps(block.get("content"))
                    if text not in seen:
                        seen.append(text)
    return seen


def check(run: Run, repo: Path, cli: Cli) -> None:
    assert run.rc == 0, run.err
    assert "LEAD-DONE" in run.out
    wt = repo / ".claude" / "worktrees" / TEAM
    # each saw its own line, never the other's, though both had written before either looked
    for me, peer in (("alice", "bob"), ("bob", "alice")):
        shown = [t for t in tool_results(run, me) if t.startswith('"line1')]  # cat, after both wrote
        assert shown and f"{me.upper()}-LINE" in shown[0] and f"{peer.upper()}-LINE" not in shown[0], shown
    lead = tool_results(run, "lead")
    review = next(t for t in lead if "ALICE-LINE" in t and "+" in t)
    assert "-base" in review, review
    assert any("merged proj/alice into main" in t for t in lead), lead
    conflict = next(t for t in lead if "conflicts in shared.txt" in t)
    assert "aborted" in conflict and "main is as it was" in conflict
    deleted = next(t for t in lead if "Cleaned up" in t)
    assert "kept bob's worktree" in deleted and "wip.txt" in deleted, deleted
    # the lead's checkout: alice's merge and nothing else; no half merge; clean
    assert (repo / "shared.txt").read_text() == "line1\nALICE-LINE\nline3\n"
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert git(repo, "status", "--porcelain") == ""
    assert sorted(p.name for p in repo.iterdir() if p.name not in (".git", ".claude")) == ["shared.txt"]
    assert git(repo, "log", "--format=%s", "main").split("\n")[:2] == ["Merge proj/alice (alice of team proj)",
                                                                      "alice edit"]  # fmt: skip
    # alice's clean worktree is gone (its branch kept: it has a commit); bob's dirty one is kept
    assert not (wt / "alice").exists() and (wt / "bob" / "wip.txt").exists()
    assert set(git(repo, "branch", "--format=%(refname:short)").split()) == {"main", "proj/alice", "proj/bob"}
    # the person's commands: review bob's branch, and its merge conflicts the same way from a shell
    diffed = cli("diff", TEAM, "bob", cwd=repo)
    assert diffed.returncode == 0 and "+BOB-LINE" in diffed.stdout and "wip.txt" in diffed.stdout, diffed.stderr
    merged = cli("merge", TEAM, "bob", cwd=repo)
    assert merged.returncode == 1 and "conflict: shared.txt" in merged.stdout, merged.stderr
    assert git(repo, "status", "--porcelain") == "" and not (repo / ".git" / "MERGE_HEAD").exists()


def test_worktrees_in_tmux(cli: Cli, config_root: Path, layout: Layout, repo: Path, tmp_path: Path, tmux: Tmux) -> None:
    with MockServer(scenario(isolation_field=False)) as server:
        env = lead_env(config_root, server)
        _pane, rc = lead_in_tmux(tmux, cli, env, repo, tmp_path, "--teammate-mode", "tmux",
                                 "--teammate-isolation", "worktree")  # fmt: skip
        run = finish(rc, tmp_path, server, timeout=90)
    check(run, repo, cli)
    assert_nothing_left(layout, config_root, tmux)


def test_worktrees_in_process(cli: Cli, config_root: Path, layout: Layout, repo: Path) -> None:
    with MockServer(scenario(isolation_field=True)) as server:
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=repo,
                   env=lead_env(config_root, server), timeout=90)  # fmt: skip
        run = Run(proc.returncode, proc.stdout, proc.stderr, server)
    check(run, repo, cli)
    assert_nothing_left(layout, config_root)


def test_status_shows_branches_and_team_delete_keeps_a_dirty_worktree(cli: Cli, layout: Layout, repo: Path) -> None:
    from agentteams.store.file.teams import TeamStore

    TeamStore(layout).create(TEAM, cwd=str(repo))
    for name, content, commit in (("alice", "A\n", True), ("bob", "B\n", False)):
        tree = repo / ".claude" / "worktrees" / TEAM / name
        git(repo, "worktree", "add", "-q", "-b", f"{TEAM}/{name}", str(tree))
        git(repo, "config", f"branch.{TEAM}/{name}.agentteamsbase", git(repo, "rev-parse", "HEAD").strip())
        (tree / "shared.txt").write_text(content)
        if commit:
            git(tree, "commit", "-qam", f"{name} edit")
    shown = cli("status", TEAM, cwd=repo.parent)
    assert shown.returncode == 0, shown.stderr
    assert "alice  proj/alice: 1 commit(s) ahead, clean" in shown.stdout
    assert "bob  proj/bob: 0 commit(s) ahead, 1 dirty file(s): shared.txt" in shown.stdout
    as_json = json.loads(cli("status", TEAM, "--json").stdout)
    assert len(as_json["worktrees"]) == 2
    deleted = cli("team", "delete", TEAM, cwd=repo.parent)
    assert deleted.returncode == 0, deleted.stderr
    assert "removed alice's worktree; kept branch proj/alice (1 commit(s) to merge)" in deleted.stdout
    assert "warning: kept bob's worktree" in deleted.stderr and "shared.txt" in deleted.stderr
    assert not (repo / ".claude" / "worktrees" / TEAM / "alice").exists()
    assert (repo / ".claude" / "worktrees" / TEAM / "bob" / "shared.txt").read_text() == "B\n"
