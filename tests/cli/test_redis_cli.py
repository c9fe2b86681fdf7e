"""The store commands on the Redis store, as a person runs them: `--store URL` (or AGENTTEAMS_STORE) before the
command, against a private redis-server; a password in the URL, and commands not ready for Redis, are one line."""

from __future__ import annotations

import json

from tests.support.cli import Cli
from tests.support.redislab import RedisServer


def test_team_task_msg_and_status_on_redis(cli: Cli, redis_server: RedisServer) -> None:
    store = ["--store", redis_server.url]
    assert cli(*store, "team", "create", "Remote Work").stdout.strip() == "remote-work"
    assert cli(*store, "task", "create", "remote-work", "first job").stdout.strip() == "1"
    assert cli(*store, "task", "create", "remote-work", "second", "--blocked-by", "1").stdout.strip() == "2"
    claimed = cli(*store, "task", "claim", "remote-work", "--agent", "team-lead")
    assert claimed.returncode == 0 and claimed.stdout.strip().endswith("1"), claimed.stdout + claimed.stderr
    sent = cli(*store, "msg", "send", "remote-work", "team-lead", "hello over redis")
    assert sent.returncode == 0, sent.stderr
    read = cli(*store, "msg", "read", "remote-work", "team-lead", "--unread", "--json")
    assert read.returncode == 0, read.stderr
    assert [m["text"] for m in json.loads(read.stdout)] == ["hello over redis"]
    status = cli(*store, "status", "remote-work")
    assert status.returncode == 0 and "first job" in status.stdout and "hello over redis" in status.stdout
    assert "remote-work" not in cli("team", "list").stdout  # the file store never saw it
    assert "remote-work" in cli("team", "list", env={**cli.env(), "AGENTTEAMS_STORE": redis_server.url}).stdout


def test_refusals_are_one_line(cli: Cli, redis_server: RedisServer) -> None:
    secret = cli("--store", "redis://:hunter2@127.0.0.1:6379/0", "team", "list")
    assert secret.returncode == 1 and secret.stderr.count("\n") == 1 and "hunter2" not in secret.stderr
    assert "must not hold a password" in secret.stderr
    resume = cli("--store", redis_server.url, "resume", "t")
    assert resume.returncode == 1 and resume.stderr.count("\n") == 1
    assert "does not work on the Redis store" in resume.stderr
    logs = cli("--store", redis_server.url, "logs", "t", "a")  # logs reads through the store now (nodes ship them)
    assert logs.returncode == 1 and logs.stderr.count("\n") == 1 and "no team named 't'" in logs.stderr
    down = cli("--store", "redis://127.0.0.1:1/0", "team", "list")
    assert down.returncode == 1 and "cannot reach the store at redis://127.0.0.1:1/0" in down.stderr
