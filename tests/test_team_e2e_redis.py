"""The teams issue's end-to-end scenario (create, tasks with dependencies, two teammates, DMs, shutdown,
TeamDelete) with AGENTTEAMS_STORE naming a private redis-server: the lead, its tmux teammates and in-process ones
keep every shared thing in Redis, and nothing of the team is left in Redis or under the config root after."""

from __future__ import annotations

from pathlib import Path

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.redis_conn import parse_url
from agentteams.store.redis_store import RedisStore
from tests.support.cli import Cli
from tests.support.redislab import RedisServer
from tests.support.team_script import TEAM, team_scenario
from tests.support.tmuxlab import Tmux
from tests.test_team_e2e import Run, assert_nothing_left, check_team_run, finish, lead_env, lead_in_tmux


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
