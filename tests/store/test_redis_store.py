"""The Redis store's own logic, in the fast tier: its URL and password rules, its key names (one cluster slot per
team), the task hash round trip, and its teams, inbox and task rules on `fakeredis` (no server; the contract suite
in tests/contract runs every behaviour on a real redis-server)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
from redis.crc import key_slot

from agentteams.cli import store_opt
from agentteams.errors import NotFoundError
from agentteams.store.api import NewMember
from agentteams.store.file.store import FileStore
from agentteams.store.leases import LeaseLostError
from agentteams.store.opener import open_store
from agentteams.store.presence import Presence
from agentteams.store.records import Task, TeamConfig
from agentteams.store.redis.connection import Keys, StoreUrlError, parse_url, password
from agentteams.store.redis.store import RedisStore, presence_ttl_ms
from agentteams.store.redis.task_hash import to_fields, to_task


@pytest.fixture
def store() -> Iterator[RedisStore]:
    client = fakeredis.FakeRedis(decode_responses=True)
    yield RedisStore(parse_url("redis://fake:6379/0"), client=client)
    client.flushall()


def test_url_parts_and_tls() -> None:
    url = parse_url("rediss://cache.example:6380/2")
    assert (url.host, url.port, url.db, url.tls) == ("cache.example", 6380, 2, True)
    assert str(parse_url("redis://localhost")) == "redis://localhost:6379/0"


@pytest.mark.parametrize("bad", ["redis://:hunter2@h:6379/0", "redis://me:hunter2@h/0", "redis://me@h/0"])
def test_a_password_in_the_url_is_refused_without_echoing_it(bad: str) -> None:
    with pytest.raises(StoreUrlError) as e:
        parse_url(bad)
    assert "hunter2" not in str(e.value) and "AGENTTEAMS_REDIS_PASSWORD" in str(e.value)


@pytest.mark.parametrize("bad", ["http://h:1/0", "redis://h:port/0", "redis://h:6379/x", "redis:///0"])
def test_a_bad_url_is_one_line(bad: str) -> None:
    with pytest.raises(StoreUrlError) as e:
        parse_url(bad)
    assert "\n" not in str(e.value)


def test_password_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTTEAMS_REDIS_PASSWORD", raising=False)
    monkeypatch.setenv("REDISCLI_AUTH", "second")
    assert password() == "second"
    monkeypatch.setenv("AGENTTEAMS_REDIS_PASSWORD", "first")
    assert password() == "first"


def test_every_key_of_a_team_is_on_one_cluster_slot() -> None:
    keys = Keys("my-team")
    names = [keys.config, keys.inboxes, keys.inbox("bob"), keys.task_seq, keys.task_index, keys.task("12"),
             keys.presence("bob"), keys.events]  # fmt: skip
    assert all(n.startswith("at:{my-team}:") for n in names)
    assert len({key_slot(n.encode()) for n in names}) == 1
    assert key_slot(Keys("other").config.encode()) != key_slot(keys.config.encode())


def test_open_store_picks_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTTEAMS_STORE", raising=False)
    assert isinstance(open_store(), FileStore)
    monkeypatch.setenv("AGENTTEAMS_STORE", "redis://127.0.0.1:1/0")  # nothing listens on port 1
    with pytest.raises(StoreUrlError, match=re.escape("cannot reach the store at redis://127.0.0.1:1/0")):
        open_store()


def test_store_option_sets_the_store_and_refuses_a_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTTEAMS_STORE", "")  # recorded, so what store_opt sets is undone after the test
    monkeypatch.delenv("AGENTTEAMS_STORE")
    argv = ["agentteams", "--store", "redis://h:6379/1", "team", "list"]
    store_opt.apply(argv)
    assert argv == ["agentteams", "team", "list"] and os.environ["AGENTTEAMS_STORE"] == "redis://h:6379/1"
    store_opt.check_command(argv)  # team works on Redis
    with pytest.raises(SystemExit):
        store_opt.check_command(["agentteams", "resume"])
    assert "`agentteams resume` does not work on the Redis store yet" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        store_opt.apply(["agentteams", "--store=redis://:pw123@h/0", "status"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pw123" not in err and "must not hold a password" in err
    assert store_opt.refused(["-p", "go", "--teammate-mode", "tmux"]) is None  # agents run on Redis
    assert store_opt.refused(["--agent-id", "a@t", "--resume", "s1"]) is None  # a teammate relaunched with its session
    assert store_opt.refused(["-c", "-p", "go"]) == "resuming a lead (-c)"
    store_opt.apply(["agentteams", "--store", "file", "watch"])
    assert os.environ["AGENTTEAMS_STORE"] == "file" and isinstance(open_store(), FileStore)
    store_opt.check_command(["agentteams", "logs"])  # the file store runs everything


def test_task_hash_round_trip_keeps_metadata_and_lease() -> None:
    task = Task(id="3", subject="s", description="d", owner="alice", status="in_progress", blocks=["4"],
                blocked_by=["1", "2"], metadata={"k": [1, 2], "agentteamsLease": {"token": 2, "owner": "alice",
                "expiresAt": 5, "seconds": 1.5}})  # fmt: skip
    fields = to_fields(task)
    assert "agentteamsLease" not in fields["doc"] and fields["token"] == "2"
    assert to_task("3", fields, "t").to_json() == task.to_json()
    bare = Task(id="1", subject="s", blocks=[], blocked_by=[])
    assert to_task("1", to_fields(bare), "t").to_json() == bare.to_json()


def test_presence_expiry_follows_the_heartbeat() -> None:
    assert presence_ttl_ms(Presence(pid=1, session_id="s", backend="tmux")) is None  # no beat: no expiry
    assert presence_ttl_ms(Presence(pid=1, session_id="s", backend="tmux", heartbeat_ms=5000)) == 40000


def test_teams_compare_and_set_redoes_a_lost_update(store: RedisStore) -> None:
    team = store.teams.create("t").name
    calls = 0

    def change(config: TeamConfig) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:  # another writer gets in between our read and our write
            store.teams.add_member(team, NewMember("intruder", cwd="/w"))
        config.description = "mine"

    store.teams.update(team, change)
    config = store.teams.read(team)
    assert calls == 2 and config.description == "mine" and config.member("intruder") is not None


def test_inbox_pending_until_acknowledged(store: RedisStore) -> None:
    team = store.teams.create("t").name
    store.teams.add_member(team, NewMember("bob", cwd="/w"))
    env = store.mail.send(team, "bob", "hi", sender="team-lead")
    assert [e.msg_id for e in store.mail.unread(team, "bob")] == [env.msg_id]
    assert [e.msg_id for e in store.mail.unread(team, "bob")] == [env.msg_id]  # read is not acknowledged
    assert store.mail.mark_delivered(team, "bob", [env]) == 1
    assert store.mail.unread(team, "bob") == [] and store.mail.read_live(team, "bob")[0].read is True


def test_a_send_is_one_round_trip_on_the_config_it_resolved_in_and_sees_every_change(store: RedisStore) -> None:
    other = RedisStore(parse_url("redis://fake:6379/0"), client=store.client)  # another process of the team
    team = store.teams.create("t").name
    store.teams.add_member(team, NewMember("bob", cwd="/w", color="green"))
    store.mail.send(team, "bob", "one", sender="team-lead")  # its config now known to this sender
    other.teams.add_member(team, NewMember("carol", cwd="/w"))  # joined since: found, not "not a member"
    store.mail.send(team, "carol", "two", sender="bob")
    assert [e.color for e in store.mail.read_all(team, "carol")] == ["green"]
    other.teams.update(team, lambda c: setattr(c.member("bob"), "color", "red"))  # changed under the known config
    store.mail.send(team, "carol", "three", sender="bob")
    assert [e.color for e in store.mail.read_all(team, "carol")] == ["green", "red"]  # resolved again, sent once
    other.teams.remove_member(team, "carol")
    with pytest.raises(NotFoundError, match="not a member"):
        store.mail.send(team, "carol", "four", sender="bob")
    other.teams.delete(team, force=True)
    with pytest.raises(NotFoundError, match="no team named"):
        store.mail.send(team, "bob", "five", sender="team-lead")


def test_claim_and_fenced_completion_in_scripts(store: RedisStore) -> None:
    team = store.teams.create("t").name
    store.tasks.create(team, "a")
    assert store.tasks.claim(team, "1", "alice").success
    store.tasks.update(team, "1", owner="bob")  # the lead reassigns it: alice's token is no longer the task's
    with pytest.raises(LeaseLostError, match="no longer yours"):
        store.tasks.update(team, "1", status="completed", assigned_by="alice")
    assert store.tasks.get(team, "1").status == "in_progress"
    with pytest.raises(NotFoundError):
        store.tasks.update(team, "7", status="completed")


def test_list_swept_runs_the_sweep_only_for_a_lease_run_out(store: RedisStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """TaskList's read of the board: one pipelined read; the sweep's script (a second pass over every task on the
    server) only when a lease read there has run out, and then only the task it took back is read again."""
    team = store.teams.create("t").name
    for subject in ("a", "b", "c"):
        store.tasks.create(team, subject)
    store.presence.write(team, "alice", Presence(pid=os.getpid(), session_id="s", backend="in-process"))
    assert store.tasks.claim(team, "1", "alice").success and store.tasks.claim(team, "2", "alice").success
    scripts: list[str] = []
    run = store.tasks._run

    def recorded(name: str, keys: list[str], args: list[Any]) -> list[str]:
        scripts.append(name)
        return run(name, keys, args)

    monkeypatch.setattr(store.tasks, "_run", recorded)
    listed, back = store.tasks.list_swept(team)
    assert (scripts, back, [t.owner for t in listed]) == ([], [], ["alice", "alice", None])
    store.tasks.client.hset(Keys(team).task("1"), "expires", 0)  # alice stopped renewing task 1 long ago
    listed, back = store.tasks.list_swept(team)
    assert scripts == ["sweep"] and [(b.task.id, b.owner) for b in back] == [("1", "alice")]
    assert [(t.id, t.owner, t.status) for t in listed] == [
        ("1", None, "pending"), ("2", "alice", "in_progress"), ("3", None, "pending"),
    ]  # fmt: skip


def test_claim_next_with_the_busy_check_is_one_pass(store: RedisStore) -> None:
    team = store.teams.create("t").name
    for subject in ("a", "b", "c", "d"):
        store.tasks.create(team, subject)
    store.tasks.update(team, "2", add_blocked_by=["1"])
    assert store.tasks.claim(team, "3", "alice").success
    busy = store.tasks.claim_next(team, "alice", check_busy=True)
    assert (busy.success, busy.reason, busy.busy_with) == (False, "agent_busy", ["3"])
    assert busy.task is not None and busy.task.id == "1"  # what it would have taken
    got = store.tasks.claim_next(team, "bob", check_busy=True)
    assert got.success and got.task is not None and got.task.id == "1"
    got = store.tasks.claim_next(team, "carol", check_busy=True)  # 2 is blocked by 1, open: 4 is next
    assert got.success and got.task is not None and got.task.id == "4"
    assert store.tasks.claim_next(team, "dave", check_busy=True).reason == "task_not_found"
