"""The lead's runtime on the Redis store: `agentteams set` requests go through the team's Redis list to the running
lead and back (the shell blocks on its answer's list), a request nobody answers is withdrawn, and the CLI reaches a
lead whose store is Redis the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.pids import LeadProcess
from agentteams.store.fs.atomic_json import epoch_ms
from agentteams.store.paths import Layout
from agentteams.store.redis.connection import Keys, parse_url
from agentteams.store.redis.store import RedisStore
from tests.support.cli import Cli
from tests.support.fake_model import FakeModel
from tests.support.redislab import RedisServer
from tests.support.runtime import TEAM, WAIT, running_lead


@pytest.fixture
def on_redis(redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> RedisStore:
    """AGENTTEAMS_STORE names the private server: the runtimes under test open it themselves."""
    monkeypatch.setenv("AGENTTEAMS_STORE", redis_server.url)
    return RedisStore(parse_url(redis_server.url))


def test_the_running_lead_answers_a_set_request_through_redis(
    tmp_path: Path, layout: Layout, on_redis: RedisStore
) -> None:
    with running_lead(layout, tmp_path, FakeModel([]), "bob") as rig:
        assert isinstance(rig.runtime.store, RedisStore), "the lead did not open the store AGENTTEAMS_STORE names"
        rig.teams.set_member_fields(TEAM, "bob", backend_type="in-process")
        changes = on_redis.changes
        ok = changes.submit(TEAM, "bob", mode="plan", model=None)
        assert changes.wait_answer(TEAM, ok, WAIT) == (
            True,
            "bob's permission mode is now plan, from its next tool call.",
        )
        bad = changes.submit(TEAM, "bob", mode=None, model="gpt-9")
        answered = changes.wait_answer(TEAM, bad, WAIT)
        assert answered is not None and answered[0] is False and "gpt-9" in answered[1]
        sent = [json.loads(e.text)["type"] for e in rig.mailbox.read_live(TEAM, "bob") if e.text.startswith("{")]
        assert sent == ["mode_set_request"]
        assert rig.teams.read(TEAM).member("bob").mode == "plan"  # type: ignore[union-attr]
    assert on_redis.client.llen(Keys(TEAM).changes) == 0
    assert not list(on_redis.client.scan_iter(match=f"at:{{{TEAM}}}:change:*"))  # each answer was taken


def test_a_request_nobody_answers_is_withdrawn(on_redis: RedisStore) -> None:
    on_redis.teams.create(TEAM, cwd="/")
    request = on_redis.changes.submit(TEAM, "bob", mode="plan", model=None)
    assert on_redis.client.llen(Keys(TEAM).changes) == 1
    assert on_redis.changes.wait_answer(TEAM, request, 0.2) is None
    assert on_redis.client.llen(Keys(TEAM).changes) == 0, "a lead coming later would still apply it"
    assert on_redis.changes.pending(TEAM) == []


def test_set_from_the_cli_reaches_a_lead_on_redis(
    cli: Cli, tmp_path: Path, layout: Layout, on_redis: RedisStore, redis_server: RedisServer
) -> None:
    with running_lead(layout, tmp_path, FakeModel([]), "bob") as rig:
        assert rig.teams.claim_lead(TEAM, LeadProcess.for_this_process(epoch_ms()))  # what TeamCreate records
        rig.teams.set_member_fields(TEAM, "bob", backend_type="in-process")
        proc = cli("--store", redis_server.url, "set", TEAM, "bob", "--mode", "acceptEdits", "--wait", str(WAIT))
        assert proc.returncode == 0, proc.stderr
        assert "bob's permission mode is now acceptEdits" in proc.stdout
        assert rig.teams.read(TEAM).member("bob").mode == "acceptEdits"  # type: ignore[union-attr]
    assert not layout.teams_dir.exists(), "the file store was used"


def test_watch_follows_a_team_on_redis(cli: Cli, on_redis: RedisStore, redis_server: RedisServer) -> None:
    """`agentteams watch` on Redis: a message shows within a second (a blocking stream read wakes it, not the 1 s
    redraw), a member's new inbox is followed too, and the team's deletion ends it."""
    import subprocess
    import time

    from agentteams.store.api import NewMember
    from tests.support.procs import read_until

    on_redis.teams.create(TEAM, cwd="/")
    on_redis.teams.add_member(TEAM, NewMember(name="alice", cwd="/"))
    on_redis.mail.send(TEAM, "alice", "first job", sender="team-lead")
    proc = cli.popen("--store", redis_server.url, "watch", TEAM, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    read_until(proc, "team-lead → alice: first job", 15)
    sent = time.monotonic()
    on_redis.mail.send(TEAM, "alice", "PING-7 please report", sender="team-lead")
    read_until(proc, "team-lead → alice: PING-7 please report", 5)
    took = time.monotonic() - sent
    assert took < 0.5, f"watch took {took:.2f} s to show the message"
    on_redis.teams.add_member(TEAM, NewMember(name="bob", cwd="/"))
    on_redis.mail.send(TEAM, "bob", "second job", sender="team-lead")  # an inbox made after watch started
    read_until(proc, "team-lead → bob: second job", 5)
    on_redis.teams.delete(TEAM, force=True)
    assert proc.wait(10) == 0
    assert proc.stdout is not None and f"team {TEAM} was deleted" in proc.stdout.read()


def dead_pid() -> int:
    import subprocess

    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


def test_cleanup_on_redis_removes_a_dead_member_then_a_dead_team(
    cli: Cli, on_redis: RedisStore, redis_server: RedisServer, layout: Layout
) -> None:
    """A dead teammate (its presence names a gone process) is removed with its task back to pending while the lead
    runs; once the lead is gone too, the whole team goes; a dry run changes nothing. No file of the file store."""
    import os

    from agentteams.store.api import NewMember
    from agentteams.store.presence import Presence

    # a name no other test's agents use: cleanup counts any process on this machine whose --agent-id is alice@team
    # as alice running (other tests run teammates named alice in team proj at the same time)
    team = f"cleanup{os.getpid()}"
    store = on_redis
    store.teams.create(team, cwd="/")
    store.teams.add_member(team, NewMember(name="alice", cwd="/", backend_type="tmux", tmux_pane_id="%999"))
    store.tasks.claim(team, store.tasks.create(team, "Parse").id, "alice")
    store.presence.write(team, "team-lead", Presence(os.getpid(), "s-l", "process", "idle"))
    store.presence.write(team, "alice", Presence(dead_pid(), "s-a", "tmux", "working", pane_id="%999"))
    env = {**cli.env(), "AGENTTEAMS_TMUX_SOCKET": str(layout.root / "no-tmux")}
    dry = cli("--store", redis_server.url, "cleanup", team, "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    assert "would remove member alice from team" in dry.stdout and "1 unfinished task(s)" in dry.stdout, dry.stdout
    assert store.teams.read(team).member("alice") is not None
    done = cli("--store", redis_server.url, "cleanup", team, env=env)
    assert done.returncode == 0 and "removed member alice" in done.stdout and "unassigned #1" in done.stdout, done
    assert store.teams.read(team).member("alice") is None and store.presence.read(team, "alice") is None
    task = store.tasks.get(team, "1")
    assert (task.owner, task.status) == (None, "pending")
    store.presence.write(team, "team-lead", Presence(dead_pid(), "s-l", "process", "idle"))
    gone = cli("--store", redis_server.url, "cleanup", env=env)
    assert gone.returncode == 0 and f"removed team {team}" in gone.stdout, gone
    assert not store.teams.present(team)
    assert not layout.teams_dir.exists()


def test_member_changes_go_to_the_team_event_stream_and_wake_its_watchers(on_redis: RedisStore) -> None:
    """Joined, mode, model, died, returned, left: one entry each, in order, beside the task events; a waiter on the
    team's events (an agent watching tasks, or `watch`) wakes on one, and not without one."""
    from agentteams.store.api import NewMember

    store = on_redis
    store.teams.create(TEAM, cwd="/")
    store.tasks.create(TEAM, "Parse")
    with store.watch(TEAM, "team-lead", tasks=True) as waiter, store.watch_teams([TEAM]) as follower:
        assert not waiter.wait(0.3) and not follower.wait(0.3)
        store.teams.add_member(TEAM, NewMember(name="alice", cwd="/"))
        assert waiter.wait(5) and follower.wait(5), "a member's joining woke no watcher"
    store.teams.set_mode(TEAM, "alice", "plan")
    store.teams.set_member_fields(TEAM, "alice", model="claude-haiku-5-5")
    store.teams.set_active(TEAM, "alice", True)  # no event: a turn's start is presence news, not membership
    store.teams.depart_member(TEAM, "alice")
    store.teams.return_member(TEAM, "alice")
    store.teams.remove_member(TEAM, "alice")
    entries = [fields for _id, fields in store.client.xrange(Keys(TEAM).events)]
    members = [(f["kind"], f["agent"], f["value"]) for f in entries if f["op"] == "member"]
    assert members == [("joined", "alice", ""), ("mode", "alice", "plan"), ("model", "alice", "claude-haiku-5-5"),
                       ("died", "alice", ""), ("returned", "alice", ""), ("left", "alice", "")]  # fmt: skip
    assert entries[0]["op"] == "create" and entries[0]["task"] == "1", "the task events share the stream"
