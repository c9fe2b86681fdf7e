"""The ACL recipe of docs/stores.md on a real redis-server: a user per team whose key pattern is the team's hash tag
(`~at:{team}:*`, plus the shared list of team names) runs that team end to end (the teams issue's scenario, every
command the lead and its teammates use) and cannot read or write another team's keys."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from agentteams.mockapi import MockServer
from agentteams.store.api import NewMember
from agentteams.store.paths import Layout
from agentteams.store.redis.connection import parse_url
from agentteams.store.redis.store import RedisStore
from tests.support.cli import Cli
from tests.support.redislab import RedisServer, recipe
from tests.support.team_run import assert_nothing_left, check_team_run, finish, lead_env, lead_in_tmux
from tests.support.team_script import TEAM, team_scenario
from tests.support.tmuxlab import Tmux

OTHER = "other"


@pytest.fixture
def acl_server(redis_server: RedisServer) -> RedisServer:
    admin = redis.Redis(host="127.0.0.1", port=redis_server.port, decode_responses=True)
    for team in (TEAM, OTHER):
        admin.execute_command(*recipe(team, f"pw-{team}-0123456789"))  # type: ignore[no-untyped-call]
    return redis_server


def as_team(team: str, server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> RedisStore:
    monkeypatch.setenv("AGENTTEAMS_REDIS_USER", f"team-{team}")
    monkeypatch.setenv("AGENTTEAMS_REDIS_PASSWORD", f"pw-{team}-0123456789")
    return RedisStore(parse_url(server.url))


def test_a_team_user_cannot_touch_another_teams_keys(acl_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    other = as_team(OTHER, acl_server, monkeypatch)
    other.teams.create(OTHER, cwd="/")
    other.teams.add_member(OTHER, NewMember(name="alice", cwd="/"))
    other.mail.send(OTHER, "alice", "for the other team only", sender="team-lead")
    other.tasks.create(OTHER, "their task")
    ours = as_team(TEAM, acl_server, monkeypatch)
    ours.teams.create(TEAM, cwd="/")
    for attempt in (
        lambda: ours.teams.read(OTHER),
        lambda: ours.mail.read_all(OTHER, "alice"),
        lambda: ours.tasks.list_tasks(OTHER),
        lambda: ours.tasks.create(OTHER, "planted"),
        lambda: ours.mail.send(OTHER, "alice", "planted", sender="team-lead"),
        lambda: ours.client.get(f"at:{{{OTHER}}}:config"),
    ):
        with pytest.raises(redis.exceptions.NoPermissionError):
            attempt()
    assert [e.text for e in other.mail.read_all(OTHER, "alice")] == ["for the other team only"]
    assert [t.subject for t in other.tasks.list_tasks(OTHER)] == ["their task"]
    names = ours.client.smembers("at:teams")  # the shared list: names only, no content
    assert names == {TEAM, OTHER}


@pytest.mark.parametrize("mode", ["in-process", "tmux"])
def test_the_team_scenario_runs_with_the_teams_own_user(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, acl_server: RedisServer, tmux: Tmux, mode: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with MockServer(team_scenario()) as server:
        env = {**lead_env(config_root, server), "AGENTTEAMS_STORE": acl_server.url}
        env.update(AGENTTEAMS_REDIS_USER=f"team-{TEAM}", AGENTTEAMS_REDIS_PASSWORD=f"pw-{TEAM}-0123456789")
        _pane, rc = lead_in_tmux(tmux, cli, env, work, tmp_path, "--teammate-mode", mode)
        run = finish(rc, tmp_path, server)
    check_team_run(run, work)
    assert_nothing_left(layout, config_root, tmux)
    assert not layout.teams_dir.exists()


def test_a_refused_command_is_one_line(cli: Cli, acl_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    as_team(OTHER, acl_server, monkeypatch).teams.create(OTHER, cwd="/")
    env = {**cli.env(), "AGENTTEAMS_REDIS_USER": f"team-{TEAM}", "AGENTTEAMS_REDIS_PASSWORD": f"pw-{TEAM}-0123456789"}
    proc = cli("--store", acl_server.url, "status", OTHER, env=env)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("agentteams: error: the Redis store: this user has no permissions"), proc.stderr
