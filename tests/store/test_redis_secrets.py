"""The Redis password (issue 18, item 4): from AGENTTEAMS_REDIS_PASSWORD or from the settings' `env`, a lead and its
tmux teammate reach a password-protected redis-server with it, yet neither's Bash tool call sees it in `env`, no
process of the team has it in argv, and hooks, MCP servers and key helpers are given an environment without it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from tests.support import redislab
from tests.support.cli import Cli
from tests.support.procs import cmdline, processes_with_env
from tests.support.redislab import RedisServer
from tests.support.team_run import assert_nothing_left, finish, lead_env, lead_in_tmux
from tests.support.team_script import TEAM, say, shutdown_route, tool, waiting
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

PASSWORD = "s3cret-redis-pw-0123456789"


@pytest.fixture
def locked_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = redislab.start(tmp_path / "redis-locked", password=PASSWORD)
    try:
        yield server
    finally:
        server.stop()


def env_scenario() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM),
        tool("Bash", command="env; echo LEAD-ENV-END"),
        tool("Task", name="alice", team_name=TEAM, description="worker", prompt="You are alice. START-alice"),
        say("Started."),
        {**tool("SendMessage", to="alice", message={"type": "shutdown_request"}), "wait_for": "ALICE-ENV-DONE"},
        waiting("Waiting."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("LEAD-DONE"),
    ]
    me = "Your name is alice"
    return {"routes": [
        shutdown_route("alice"),
        {"name": "alice-start", "match": {"system": me, "last_prompt": "START-alice"},
         "turns": [tool("Bash", command="env; echo ALICE-ENV-END"),
                   tool("SendMessage", to="team-lead", message="ALICE-ENV-DONE"), say("Done.")]},
        {"name": "alice-other", "match": {"system": me}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team", "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


@pytest.mark.parametrize("where", ["environment", "settings"])
def test_the_password_reaches_the_store_and_no_tool(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, tmux: Tmux, locked_redis: RedisServer, where: str
) -> None:
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    argv_seen: list[str] = []
    with MockServer(env_scenario()) as server:
        env = {**lead_env(config_root, server), "AGENTTEAMS_STORE": locked_redis.url}
        env.pop("REDISCLI_AUTH", None)
        if where == "environment":
            env["AGENTTEAMS_REDIS_PASSWORD"] = PASSWORD
        else:
            env.pop("AGENTTEAMS_REDIS_PASSWORD", None)
            settings = {"env": {"AGENTTEAMS_REDIS_PASSWORD": PASSWORD}}
            (work / ".claude" / "settings.json").write_text(json.dumps(settings))
        _pane, rc = lead_in_tmux(tmux, cli, env, work, tmp_path, "--teammate-mode", "tmux")

        def alice_ran_env() -> bool:
            argv_seen.extend(" ".join(cmdline(p)) for p in processes_with_env("CLAUDE_CONFIG_DIR", str(config_root)))
            return any(r.get("route") == "alice-start" for r in server.requests[1:])

        wait_until(alice_ran_env, 60, "alice's Bash call", interval=0.05)
        run = finish(rc, tmp_path, server, timeout=90)
    assert run.rc == 0, run.err
    assert "LEAD-DONE" in run.out
    bodies = json.dumps([r.get("body") for r in run.server.requests])
    assert "LEAD-ENV-END" in bodies and "ALICE-ENV-END" in bodies, "a Bash call's output never reached a model"
    assert "CLAUDE_CONFIG_DIR=" in bodies, "the env command printed nothing"
    assert PASSWORD not in bodies, "the password reached a model through a Bash call's env"
    assert "AGENTTEAMS_REDIS_PASSWORD" not in bodies and "REDISCLI_AUTH" not in bodies
    assert argv_seen and not [a for a in argv_seen if PASSWORD in a], "the password was in a process's argv"
    assert PASSWORD not in run.err and PASSWORD not in run.out
    assert_nothing_left(layout, config_root, tmux)


def test_a_wrong_password_is_one_line_without_the_password(cli: Cli, locked_redis: RedisServer) -> None:
    env = {**cli.env(), "AGENTTEAMS_REDIS_PASSWORD": "not-" + PASSWORD}
    proc = cli("--store", locked_redis.url, "team", "list", env=env)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "refused the password" in proc.stderr and PASSWORD not in proc.stderr
    env.pop("AGENTTEAMS_REDIS_PASSWORD")
    bare = cli("--store", locked_redis.url, "team", "list", env=env)
    assert bare.returncode == 1 and bare.stderr.count("\n") == 1, bare.stderr


def test_commands_an_agent_runs_get_no_password(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from agentteams.agent.hooks.runner import hook_env
    from agentteams.procs.fork.server import carried_credentials
    from agentteams.tools.shell.process import child_env

    monkeypatch.setenv("AGENTTEAMS_REDIS_PASSWORD", PASSWORD)
    monkeypatch.setenv("REDISCLI_AUTH", PASSWORD)
    for env in (child_env(), hook_env(tmp_path)):
        assert "AGENTTEAMS_REDIS_PASSWORD" not in env and "REDISCLI_AUTH" not in env
        assert PASSWORD not in json.dumps(env)
    # a teammate the fork server starts gets the lead's password through its environment (it needs it to connect)
    assert carried_credentials({}, dict(os.environ))["AGENTTEAMS_REDIS_PASSWORD"] == PASSWORD
    from agentteams.backends.tmux import SECRET_KEYS

    assert {"AGENTTEAMS_REDIS_PASSWORD", "REDISCLI_AUTH"} <= SECRET_KEYS  # refused on a tmux command line
