"""The file mirror (issue 18, item 3): a team kept in a real redis-server, copied into a config root in Claude Code's
layout and read back there by the file store (as a local monitor would); only changed files rewritten; a local team
of the same name left alone; what the source drops, dropped; the command wakes on news and stops on Ctrl-C."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.store import FileStore
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.mirror import MARK, Mirror
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.redis.connection import parse_url
from agentteams.store.redis.store import RedisStore
from tests.support.cli import Cli
from tests.support.redislab import RedisServer
from tests.support.wait import wait_until


def remote_team(store: RedisStore) -> str:
    team = store.teams.create("Far Away", description="on another machine").name
    store.teams.add_member(team, NewMember(name="alice", color="blue", model="claude-sonnet-4-6"))
    store.tasks.create(team, "first")
    store.tasks.create(team, "second", blocked_by=["1"])
    store.mail.send(team, "alice", "hello from afar", sender=LEAD_NAME)
    return team


def test_a_mirrored_team_reads_back_in_claude_codes_layout(redis_server: RedisServer, tmp_path: Path) -> None:
    store = RedisStore(parse_url(redis_server.url))
    team = remote_team(store)
    local = Layout(tmp_path / "here")
    copy = Mirror(store, local)
    first = copy.sync()
    assert local.config_file(team) in first.written and local.task_file(team, "2") in first.written
    config = TeamStore(local).read(team)  # the file store reads what the mirror wrote
    assert [m.name for m in config.members] == [LEAD_NAME, "alice"] and config.description == "on another machine"
    assert [(t.id, t.blocked_by) for t in TaskStore(local).list_tasks(team)] == [("1", []), ("2", ["1"])]
    assert [e.text for e in Mailbox(local).read_live(team, "alice")] == ["hello from afar"]
    assert copy.sync().written == []  # nothing changed: nothing rewritten (a local watcher wakes for real news)
    store.tasks.update(team, "1", status="completed")
    store.mail.send(team, LEAD_NAME, "done", sender="alice")
    again = copy.sync()
    assert sorted(p.name for p in again.written) == ["1.json", f"{LEAD_NAME}.json"]
    assert json.loads(local.task_file(team, "1").read_text())["status"] == "completed"
    store.tasks.delete(team, "2")
    assert local.task_file(team, "2") in copy.sync().removed and not local.task_file(team, "2").exists()
    store.teams.delete(team, force=True)
    copy.sync()
    assert not local.team_dir(team).exists() and not local.task_dir(team).exists()


def test_a_local_team_of_the_same_name_is_left_alone(redis_server: RedisServer, tmp_path: Path) -> None:
    store = RedisStore(parse_url(redis_server.url))
    team = remote_team(store)
    local = Layout(tmp_path / "here")
    mine = FileStore(local)
    mine.teams.create("Far Away", description="mine")
    mine.tasks.create(team, "my own task")
    done = Mirror(store, local).sync()
    assert done.refused == [team] and done.written == []
    assert TeamStore(local).read(team).description == "mine"
    assert [t.subject for t in TaskStore(local).list_tasks(team)] == ["my own task"]
    store.teams.delete(team, force=True)
    Mirror(store, local).sync()  # gone from the source: the local team is not the mirror's to remove
    assert TeamStore(local).read(team).description == "mine" and not (local.team_dir(team) / MARK).exists()


def test_the_mirror_command_follows_the_store_and_stops_on_ctrl_c(
    cli: Cli, redis_server: RedisServer, config_root: Path
) -> None:
    refused = cli("mirror", "--once")
    assert refused.returncode == 1 and "choose one with --store" in refused.stderr
    store = RedisStore(parse_url(redis_server.url))
    team = remote_team(store)
    once = cli("--store", redis_server.url, "mirror", "--once")
    assert once.returncode == 0 and "written" in once.stdout, once.stderr
    local = Layout(config_root)
    assert TeamStore(local).read(team).member("alice") is not None
    proc = cli.popen("--store", redis_server.url, "mirror", "--interval", "30")  # only news wakes it this soon
    inbox = local.inbox_file(team, LEAD_NAME)
    store.mail.send(team, LEAD_NAME, "news", sender="alice")
    wait_until(lambda: inbox.exists() and "news" in inbox.read_text(), 10, "the message in the mirrored inbox")
    store.teams.add_member(team, NewMember(name="bob"))
    store.mail.send(team, "bob", "welcome", sender=LEAD_NAME)  # a new inbox: the next pass watches it
    wait_until(lambda: local.inbox_file(team, "bob").exists(), 10, "bob's inbox mirrored")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(10) == 0
