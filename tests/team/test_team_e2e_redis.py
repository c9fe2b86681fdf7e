"""The teams issue's end-to-end scenario (create, tasks with dependencies, two teammates, DMs, shutdown,
TeamDelete) with AGENTTEAMS_STORE naming a private redis-server: the lead, its tmux teammates and in-process ones
keep every shared thing in Redis, and nothing of the team is left in Redis or under the config root after."""

from __future__ import annotations

from pathlib import Path

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.redis.connection import parse_url
from agentteams.store.redis.store import RedisStore
from tests.support.cli import Cli
from tests.support.hookscript import HookLab
from tests.support.redislab import RedisServer
from tests.support.team_run import Run, assert_nothing_left, check_team_run, finish, lead_env, lead_in_tmux
from tests.support.team_script import TEAM, team_scenario
from tests.support.tmuxlab import Tmux


def redis_env(config_root: Path, server: MockServer, redis: RedisServer) -> dict[str, str]:
    env = lead_env(config_root, server)
    env["AGENTTEAMS_STORE"] = redis.url
    return env


def assert_redis_empty(redis: RedisServer) -> None:
    client = RedisStore(parse_url(redis.url)).client
    left = sorted(str(k) for k in client.scan_iter(match=f"at:{{{TEAM}}}:*"))
    assert left == [], f"the team's keys are left in Redis: {left}"


def assert_nothing_on_disk(layout: Layout) -> None:
    """Not even a directory of the file store was made: every agent kept the team in Redis."""
    assert not layout.teams_dir.exists(), "the file store's teams/ was written"
    assert not layout.tasks_root.exists(), "the file store's tasks/ was written"


def test_redis_team_in_tmux_panes(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, tmux: Tmux, redis_server: RedisServer
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with MockServer(team_scenario()) as server:
        env = redis_env(config_root, server, redis_server)
        _pane, rc = lead_in_tmux(tmux, cli, env, work, tmp_path, "--teammate-mode", "tmux")
        run = finish(rc, tmp_path, server)
    check_team_run(run, work)
    assert_nothing_left(layout, config_root, tmux)
    assert_nothing_on_disk(layout)
    assert_redis_empty(redis_server)


def test_redis_team_in_process(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, redis_server: RedisServer
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with MockServer(team_scenario()) as server:
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=work,
                   env=redis_env(config_root, server, redis_server), timeout=90)  # fmt: skip
        run = Run(proc.returncode, proc.stdout, proc.stderr, server)
    check_team_run(run, work)
    assert_nothing_left(layout, config_root)
    assert_nothing_on_disk(layout)
    assert_redis_empty(redis_server)


class EventLog:
    """Every member event of TEAM's stream as it is added (read by a thread: TeamDelete removes the stream)."""

    def __init__(self, store: RedisStore) -> None:
        import threading

        self.store, self.entries = store, list[dict[str, str]]()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._follow, daemon=True)

    def _follow(self) -> None:
        from agentteams.store.redis.connection import Keys

        last = "0-0"
        while not self.stop.is_set():
            for _stream, found in self.store.client.xread({Keys(TEAM).events: last}, block=50) or []:
                last = found[-1][0]
                self.entries += [f for _id, f in found if f["op"] == "member"]

    def kinds(self) -> list[tuple[str, str]]:
        return [(e["kind"], e["agent"]) for e in self.entries]

    def __enter__(self) -> EventLog:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)


def test_redis_team_hooks_and_events_of_a_killed_teammate(
    cli: Cli, config_root: Path, tmp_path: Path, tmux: Tmux, redis_server: RedisServer
) -> None:
    """On Redis as on files: TeammateSpawned, and TeammateDied within 2 s of a kill -9 (the lead sees the death in
    the Redis presence and the member's pane); the team's event stream recorded alice joining and dying."""
    import os
    import signal
    import time

    from tests.support.hooks import check_payload, configure
    from tests.support.hookscript import HookLab
    from tests.support.team_run import in_her_pane, kill_scenario
    from tests.support.wait import wait_until

    work = tmp_path / "work"
    work.mkdir()
    lab = HookLab(tmp_path / "lab")
    configure(work, lab, ("TeammateDied", "TeammateSpawned"))
    store = RedisStore(parse_url(redis_server.url))
    seen = EventLog(store)
    with seen, MockServer(kill_scenario()) as server:
        _pane, rc = lead_in_tmux(tmux, cli, redis_env(config_root, server, redis_server), work, tmp_path,
                                 "--teammate-mode", "tmux")  # fmt: skip
        wait_until(lambda: in_her_pane(store.presence.read(TEAM, "alice")), 30, "working, in her pane")
        presence = store.presence.read(TEAM, "alice")
        assert presence is not None
        os.kill(presence.pid, signal.SIGKILL)
        killed = time.time()
        wait_until(lambda: bool(lab.entries("TeammateDied")), 5, "the TeammateDied hook",
                   explain=lambda: _after_kill(tmux, presence.pid, killed, tmp_path, lab, seen))  # fmt: skip
        wait_until(lambda: ("died", "alice") in seen.kinds(), 5, "alice's death in the team's event stream",
                   explain=lambda: str(seen.kinds()))  # fmt: skip
        run = finish(rc, tmp_path, server)
    assert run.rc == 0, run.err
    [died] = lab.entries("TeammateDied")
    assert died["t"] - killed < 2.0, f"TeammateDied fired {died['t'] - killed:.2f} s after the kill"
    payload = check_payload(died, work)
    assert (payload["teammate_name"], payload["agent_id"]) == ("alice", f"alice@{TEAM}")
    [spawned] = lab.entries("TeammateSpawned")
    assert spawned["payload"]["backend"] == "tmux"
    events = seen.kinds()
    assert events[0] == ("joined", "alice") and events[-1] == ("died", "alice"), events
    assert_redis_empty(redis_server)


def _after_kill(tmux: Tmux, pid: int, killed: float, tmp: Path, lab: HookLab, seen: EventLog) -> str:
    """What a late TeammateDied hook leaves to look at: the panes, the killed pid, the lead's stderr, the events."""
    import time

    from agentteams.pids import pid_alive

    panes = tmux.run("list-panes", "-a", "-F", "#{pane_id} dead=#{pane_dead} pid=#{pane_pid} #{pane_current_command}")
    err = (tmp / "err.txt").read_text() if (tmp / "err.txt").exists() else "(no err.txt)"
    return (
        f"{time.time() - killed:.2f} s after the kill; pid {pid} alive: {pid_alive(pid)}\npanes:\n{panes}\n"
        f"hook entries: {lab.entries()}\nevents: {seen.kinds()}\nlead stderr:\n{err[-3000:]}"
    )
