"""`agentteams cleanup`: real processes, a private tmux server and the real stores build the dead state it removes.

A live member (live pid, live pane), its tasks and its pane must come out byte-identical; `--dry-run` changes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agentteams.backends.tmux import TmuxBackend
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence, write_presence
from agentteams.team.cleanup import PaneView, TeamCleanup
from tests.support.cli import Cli
from tests.support.procs import child_env, cmdline, pid_alive
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until


@dataclass
class Scene:
    """What the tests built: live processes, panes by role, and the lock and temp files."""

    tmux: Tmux
    lead_pane: str
    panes: dict[str, str] = field(default_factory=dict)
    live: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)


def start_sleeper(*extra: str) -> subprocess.Popen[bytes]:
    """A live process; `extra` lands in its argv (e.g. `--agent-id x@t`, as a teammate's launcher has)."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", *extra])


def dead_pid() -> int:
    proc = subprocess.Popen(["sleep", "600"])
    proc.kill()
    proc.wait()  # reaped: the pid is gone, not a zombie
    assert not pid_alive(proc.pid)
    return proc.pid


def presence(layout: Layout, team: str, agent: str, pid: int, pane: str = "") -> None:
    write_presence(layout, team, agent, Presence(pid=pid, session_id="s", backend="tmux", pane_id=pane))


def pane_states(tmux: Tmux) -> dict[str, tuple[bool, str]]:
    """Every pane: id -> (dead, title)."""
    return {pane: (p.dead, p.title) for pane, p in tmux.panes().items()}


def pane_state(tmux: Tmux, pane: str) -> tuple[bool, str] | None:
    return pane_states(tmux).get(pane)


def aged(path: Path, seconds: float) -> Path:
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


@pytest.fixture
def scene(
    tmux: Tmux, tmp_path: Path, config_root: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Scene]:
    monkeypatch.setenv("AGENTTEAMS_TMUX_SOCKET", str(tmux.sock))
    s = Scene(tmux, tmux.start(child_env(config_root), tmp_path, options={"remain-on-exit": "on"}))
    try:
        build(s, layout, tmp_path)
        yield s
    finally:
        for proc in s.live.values():
            proc.kill()
            proc.wait()


def spawn(s: Scene, backend: TmuxBackend, tag: str, command: list[str], cwd: Path) -> str:
    pane = backend.spawn_pane(s.lead_pane, tag.partition("@")[0], "blue", command, cwd, {}, tag=tag)
    s.panes[tag] = pane
    return pane


def build(s: Scene, layout: Layout, cwd: Path) -> None:
    teams, tasks = TeamStore(layout), TaskStore(layout)
    backend = TmuxBackend(str(s.tmux.sock))
    s.live["lead"] = start_sleeper()
    s.live["alice"] = start_sleeper()
    # team t: a live lead; alice alive (pid and pane), bob dead (pid gone, pane exited), carol dead (pane gone),
    # dave unknown (no presence, no pane: kept); ghost@t tags a pane although ghost is no member
    teams.create("t")
    presence(layout, "t", "team-lead", s.live["lead"].pid)
    alice = spawn(s, backend, "alice@t", ["sleep", "600"], cwd)
    bob = spawn(s, backend, "bob@t", ["false"], cwd)  # exits 1: remain-on-exit=failed keeps the dead pane
    spawn(s, backend, "ghost@t", ["sleep", "600"], cwd)
    teams.add_member("t", NewMember(name="alice", tmux_pane_id=alice, backend_type="tmux"))
    teams.add_member("t", NewMember(name="bob", tmux_pane_id=bob, backend_type="tmux"))
    teams.add_member("t", NewMember(name="carol", tmux_pane_id="%999", backend_type="tmux"))
    teams.add_member("t", NewMember(name="dave"))
    presence(layout, "t", "alice", s.live["alice"].pid, alice)
    presence(layout, "t", "bob", dead_pid(), bob)
    for owner in ("alice", "bob", "carol"):
        task = tasks.create("t", f"job of {owner}")
        tasks.update("t", task.id, owner=owner, status="in_progress")
    # team gone: its lead and only member died; erin's pane still runs something (not an agent)
    teams.create("gone")
    presence(layout, "gone", "team-lead", dead_pid())
    teams.add_member("gone", NewMember(name="erin"))
    presence(layout, "gone", "erin", dead_pid())
    spawn(s, backend, "erin@gone", ["sleep", "600"], cwd)
    tasks.create("gone", "left over")
    # team foreign: as a real Claude Code lead leaves it (no presence files); gina's untagged pane has exited
    teams.create("foreign")
    gina = backend.spawn_pane(s.lead_pane, "gina", "green", ["false"], cwd, {})
    s.panes["gina"] = gina
    teams.add_member("foreign", NewMember(name="gina", tmux_pane_id=gina, backend_type="tmux"))
    # team kept: made by `agentteams team create`, no process ever recorded: nothing says it is abandoned
    teams.create("kept")
    # team headless: its lead died but a member still runs, so the team stays (and so does the lead's presence)
    s.live["frank"] = start_sleeper()
    teams.create("headless")
    presence(layout, "headless", "team-lead", dead_pid())
    teams.add_member("headless", NewMember(name="frank"))
    presence(layout, "headless", "frank", s.live["frank"].pid)
    # locks and temp files: stale/old ones go, fresh ones stay
    inboxes = layout.inbox_dir("t")
    # a fresh lock is one its holder keeps touching: dated ahead, it stays fresh however long a loaded machine takes
    # to build this scene and start `cleanup` (it used to go stale past 10 s)
    for name, age in (("stale_lock", 30), ("fresh_lock", -600)):
        path = inboxes / f"{name}.json.lock"
        path.mkdir()
        s.files[name] = aged(path, age)
    s.files["old_tmp"] = inboxes / "alice.json.tmp.deadbeef"
    s.files["old_tmp"].write_bytes(b"{")
    aged(s.files["old_tmp"], 120)
    s.files["fresh_tmp"] = layout.task_dir("t") / "1.json.tmp.0badf00d"
    s.files["fresh_tmp"].write_bytes(b"{")
    aged(s.files["fresh_tmp"], -600)  # as the fresh lock: a writer still at it
    wait_until(lambda: pane_state(s.tmux, bob) == (True, "bob"), 10, "bob's pane to exit")
    wait_until(lambda: pane_state(s.tmux, gina) == (True, "gina"), 10, "gina's pane to exit")
    wait_until(lambda: pane_state(s.tmux, alice) == (False, "alice"), 10, "alice's pane to run")


def snapshot(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every file and directory under `root`: mtime and content (None for a directory)."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[str(path.relative_to(root))] = (st.st_mtime_ns, None if path.is_dir() else path.read_bytes())
    return out


def members(layout: Layout, team: str) -> list[str]:
    return [m.name for m in TeamStore(layout).read(team).members]


def test_cleanup_removes_exactly_the_dead_state(scene: Scene, cli: Cli, layout: Layout) -> None:
    alice_files = [layout.presence_file("t", "alice"), layout.task_file("t", "1"), layout.inbox_file("t", "alice")]
    before = {p: p.read_bytes() for p in alice_files if p.exists()}
    panes_before = pane_states(scene.tmux)

    proc = cli("cleanup")

    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "removed member bob from team t: its process" in out
    assert "removed member carol from team t: its pane %999 is gone" in out
    assert "removed team gone: its lead (process" in out
    assert "removed team foreign: no lead process on record and every member is dead" in out
    assert members(layout, "t") == ["team-lead", "alice", "dave"]
    assert {p: p.read_bytes() for p in alice_files if p.exists()} == before, "alice's files changed"
    task_store = TaskStore(layout)
    for task_id in ("2", "3"):  # bob's and carol's work is back on the board
        task = task_store.get("t", task_id)
        assert (task.owner, task.status) == (None, "pending")
    assert not layout.presence_file("t", "bob").exists()
    for team in ("gone", "foreign"):
        assert not layout.team_dir(team).exists() and not layout.task_dir(team).exists()
    assert TeamStore(layout).exists("kept") and TeamStore(layout).exists("headless")
    assert layout.presence_file("headless", "team-lead").exists(), "frank needs it to notice its lead died"
    panes = pane_states(scene.tmux)
    p = scene.panes
    assert panes[p["alice@t"]] == panes_before[p["alice@t"]] == (False, "alice")
    assert scene.lead_pane in panes
    for gone in ("bob@t", "ghost@t", "erin@gone"):
        assert p[gone] not in panes, f"{gone}'s pane is still there"
        assert f"killed pane {p[gone]} ({gone})" in out
    assert p["gina"] not in panes and f"killed pane {p['gina']}: it has exited" in out
    assert all(proc.poll() is None for proc in scene.live.values()), "a live process was killed"
    f = scene.files
    assert not f["stale_lock"].exists() and f["fresh_lock"].is_dir()
    assert not f["old_tmp"].exists() and f["fresh_tmp"].exists()
    assert len(out.splitlines()) == 10, out  # 2 teams, 2 members, 4 panes, 1 lock, 1 temp file
    again = cli("cleanup")
    assert again.stdout.strip() == "nothing to clean up", again.stdout


def test_dry_run_changes_nothing(scene: Scene, cli: Cli, config_root: Path) -> None:
    files, panes = snapshot(config_root), pane_states(scene.tmux)

    proc = cli("cleanup", "--dry-run")
    as_json = cli("cleanup", "--dry-run", "--json")

    assert proc.returncode == 0 and as_json.returncode == 0, proc.stderr + as_json.stderr
    assert snapshot(config_root) == files
    assert pane_states(scene.tmux) == panes
    lines = proc.stdout.splitlines()
    assert all(line.startswith("would ") for line in lines), lines
    assert any(line.startswith("would remove member bob from team t") for line in lines)
    data = json.loads(as_json.stdout)
    assert data["dry_run"] is True
    assert {a["outcome"] for a in data["actions"]} == {"planned"}
    assert sorted((a["kind"], a["target"]) for a in data["actions"] if a["kind"] in ("team", "member")) == [
        ("member", "bob"), ("member", "carol"), ("team", "foreign"), ("team", "gone"),
    ]  # fmt: skip
    assert len(data["actions"]) == len(lines)


def test_one_team_only(scene: Scene, cli: Cli, layout: Layout) -> None:
    proc = cli("cleanup", "gone")
    assert proc.returncode == 0, proc.stderr
    assert not layout.team_dir("gone").exists()
    assert members(layout, "t") == ["team-lead", "alice", "bob", "carol", "dave"]
    assert scene.files["stale_lock"].exists(), "a lock of another team was touched"
    assert scene.panes["ghost@t"] in scene.tmux.panes()


def test_each_step_rechecks_liveness(scene: Scene, layout: Layout) -> None:
    """bob comes back between the plan and the act (a new live process records itself): he stays."""
    cleaner = TeamCleanup(layout, PaneView(str(scene.tmux.sock)))
    plan = cleaner.plan("t")
    scene.live["bob"] = start_sleeper()
    presence(layout, "t", "bob", scene.live["bob"].pid)
    cleaner.apply(plan)
    outcomes = {(a.kind, a.target): a.outcome for a in plan.actions}
    assert outcomes[("member", "bob")] == "skipped"
    assert outcomes[("member", "carol")] == "done"
    assert members(layout, "t") == ["team-lead", "alice", "bob", "dave"]
    assert TaskStore(layout).get("t", "2").owner == "bob"


def test_a_running_agent_process_outweighs_a_missing_pane(scene: Scene, layout: Layout) -> None:
    """carol's pane is not on this tmux server, but a process with `--agent-id carol@t` runs: she is alive."""
    scene.live["carol"] = start_sleeper("--agent-id", "carol@t")
    wait_until(lambda: "carol@t" in " ".join(cmdline(scene.live["carol"].pid)), 10, "carol's argv")
    plan = TeamCleanup(layout, PaneView(str(scene.tmux.sock))).plan("t")
    assert ("member", "carol") not in {(a.kind, a.target) for a in plan.actions}


def test_a_task_list_without_its_team_is_reported_and_kept(cli: Cli, layout: Layout, config_root: Path) -> None:
    """A team gone, its task list left (as claude leaves it): cleanup says so, in the dry run and the real one, and
    removes nothing (it said "nothing to clean up")."""
    teams, tasks = TeamStore(layout), TaskStore(layout)
    teams.create("old")
    tasks.create("old", "done work")
    tasks.create("old", "open work")
    tasks.update("old", "1", status="completed")
    shutil.rmtree(layout.team_dir("old"))  # as claude's lead leaves it on exit (or a crash between two removals)
    for args in (("--dry-run",), ()):
        proc = cli("cleanup", *args, env=child_env(config_root))
        assert proc.returncode == 0, proc.stderr
        assert f"task list {layout.task_dir('old')} has no team: 2 tasks, 1 not done" in proc.stderr, proc.stderr
        assert [t.subject for t in tasks.list_tasks("old")] == ["done work", "open work"]
