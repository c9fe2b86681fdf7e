"""A team of 16 on this machine, tmux and in-process: all spawned, all at work at once, all shut down on the lead's
request, and nothing left behind (no pane, window, process, fork server, team dir or task dir).

The lead is `agentteams -p` against the scripted server (tests/support/big_team.py): 16 tasks, 16 spawns; each
teammate claims a task by itself and holds it in a Bash barrier until all 16 tasks are taken, so none can take two.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from tests.support.big_team import big_team_scenario, done_mark, names
from tests.support.cli import Cli
from tests.support.procs import child_env, cmdline, processes_with_env
from tests.support.team_script import TEAM
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

N = 16
KEY = "test-key-scale-0123456789abcdef"
DEADLINE = 150.0  # seconds for the whole run; it takes 8-11 s on 2 cores (tmux), 7-8 s in process


def lead_env(config_root: Path, server: MockServer) -> dict[str, str]:
    env = child_env(config_root)
    env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.base_url, CLAUDE_CODE_MAX_RETRIES="1")
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    return env


def check_all_worked(server: MockServer, work: Path, out: str) -> None:
    """Every teammate claimed one task, waited for all 16 to be taken, completed it, reported, approved shutdown."""
    assert "LEAD-DONE" in out
    log = (work / "work.log").read_text().split()  # task-<id>-by-<name>
    by = {line.rsplit("-by-", 1)[1]: line.split("-")[1] for line in log}
    assert len(log) == N and sorted(by) == names(N), log
    assert sorted(by.values(), key=int) == [str(k) for k in range(1, N + 1)], f"a task done twice or not at all: {log}"
    routes = [r.get("route") for r in server.requests]
    for w in names(N):
        assert f"{w}-shutdown" in routes, f"{w} never answered the shutdown request"
        after_barrier = [r for r in server.requests if r.get("route") == f"{w}-claim" and r.get("turn") == 1]
        assert after_barrier, f"{w} never got past the barrier"
        result = json.dumps(after_barrier[0]["body"]["messages"][-1])
        assert "Exit code" not in result and "exit code" not in result, f"{w}'s barrier failed: {result[:300]}"
    lead = json.dumps([r["body"] for r in server.requests if r.get("route") == "lead"][-1])
    assert all(done_mark(w) in lead for w in names(N)), "a teammate's report never reached the lead's model"


def assert_nothing_left(layout: Layout, config_root: Path, exclude: frozenset[int] = frozenset()) -> None:
    assert not (layout.teams_dir / TEAM).exists(), "the team dir is left behind"
    assert not layout.task_dir(TEAM).exists(), "the task dir is left behind"
    left = processes_with_env("CLAUDE_CONFIG_DIR", str(config_root), exclude=exclude)
    assert left == [], f"processes left behind: {[(p, cmdline(p)) for p in left]}"


def test_sixteen_teammates_in_tmux(
    cli: Cli, config_root: Path, layout: Layout, work: Path, tmp_path: Path, tmux: Tmux
) -> None:
    started = time.monotonic()
    with MockServer(big_team_scenario(N, layout.task_dir(TEAM))) as server:
        pane = tmux.start(lead_env(config_root, server), work, options={"remain-on-exit": "on"})
        rc = tmp_path / "rc.txt"
        line = cli.line("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "tmux")
        tmux.respawn(pane, f"{line} > {tmp_path}/out.txt 2> {tmp_path}/err.txt; echo $? > {rc}")

        def spawned() -> bool:
            return len(tmux.panes()) == N + 1

        wait_until(spawned, DEADLINE, f"{N} teammate panes", interval=0.1,
                   explain=(tmp_path / "err.txt").read_text)  # fmt: skip
        windows = tmux.run("list-windows", "-a", "-F", "#{window_id} #{window_panes}").splitlines()
        wait_until(lambda: rc.exists() and rc.read_text().strip() != "", DEADLINE, "the lead to exit", interval=0.1,
                   explain=lambda: (tmp_path / "err.txt").read_text()[-3000:])  # fmt: skip
        err = (tmp_path / "err.txt").read_text()
        assert rc.read_text().strip() == "0", err
        check_all_worked(server, work, (tmp_path / "out.txt").read_text())
    assert len(windows) > 1, f"all {N + 1} panes squeezed into one window: {windows}"
    assert all(int(row.split()[1]) <= 5 for row in windows), windows
    assert list(tmux.panes()) == [pane], f"teammate panes left behind: {tmux.panes()}"
    assert tmux.run("list-windows", "-a", "-F", "#{window_id}").count("@") == 1, "a teammate window is left"
    assert_nothing_left(layout, config_root, frozenset({tmux.server_pid()}))
    print(f"\n16 teammates in tmux: {time.monotonic() - started:.1f} s")


def test_sixteen_teammates_in_process(cli: Cli, config_root: Path, layout: Layout, work: Path) -> None:
    started = time.monotonic()
    with MockServer(big_team_scenario(N, layout.task_dir(TEAM))) as server:
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=work,
                   env=lead_env(config_root, server), timeout=DEADLINE)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        check_all_worked(server, work, proc.stdout)
    assert_nothing_left(layout, config_root)
    print(f"\n16 teammates in process: {time.monotonic() - started:.1f} s")


def test_an_idle_teammate_wait_ends_on_news_on_stop_or_after_its_slices() -> None:
    """The idle teammate's wait (team/teammate/runtime.py): woken at once by its watcher, ended by the stop flag between
    slices, else over after `slices` slices (then it looks at leases, its lead and the team again)."""
    import threading

    from agentteams.store.fs.watch import wait_in_slices

    class Watcher:
        def __init__(self, news_at: int | None) -> None:
            self.calls, self.news_at = 0, news_at

        def wait(self, timeout: float | None = None) -> bool:
            self.calls += 1
            return self.calls == self.news_at

    stop = threading.Event()
    quiet, news = Watcher(None), Watcher(2)
    assert wait_in_slices(quiet, stop, 0.0, 4) is False and quiet.calls == 4
    assert wait_in_slices(news, stop, 0.0, 4) is True and news.calls == 2
    stop.set()
    stopped = Watcher(None)
    assert wait_in_slices(stopped, stop, 0.0, 4) is False and stopped.calls == 0


def test_a_tmux_teammate_is_alive_while_its_pane_process_runs(layout: Layout, tmp_path: Path) -> None:
    """The lead's twice-a-second liveness check of a tmux teammate reads /proc (no tmux client, no presence file):
    the pane's process by pid and start time, so a reused pid is not mistaken for it."""
    import subprocess

    from agentteams.pids import proc_start
    from agentteams.store.opener import open_store
    from agentteams.team.spawn.base import Handle
    from agentteams.team.spawn.spawners import TmuxSpawner

    spawner = TmuxSpawner(open_store(layout), socket_path=str(tmp_path / "no-server.sock"))
    proc = subprocess.Popen(["sleep", "30"])
    try:
        start = proc_start(proc.pid)
        assert spawner.alive(Handle("w00", "tmux", "%1", pane_pid=proc.pid, pane_started=start), TEAM)
        assert not spawner.alive(Handle("w00", "tmux", "%1", pane_pid=proc.pid, pane_started="1"), TEAM)
    finally:
        proc.kill()
        proc.wait()
    assert not spawner.alive(Handle("w00", "tmux", "%1", pane_pid=proc.pid, pane_started=start), TEAM)
