"""The private redis-server runs with AOF on (every write fsynced): a message sent and a claim made survive the
server's SIGKILL and restart, and a message read but never acknowledged is still pending afterwards."""

from __future__ import annotations

from agentteams.store.api import NewMember
from agentteams.store.redis.connection import parse_url
from agentteams.store.redis.store import RedisStore
from tests.support.redislab import RedisServer


def test_sends_and_claims_survive_a_kill_and_restart(redis_server: RedisServer) -> None:
    store = RedisStore(parse_url(redis_server.url))
    team = store.teams.create("durable").name
    store.teams.add_member(team, NewMember("bob", cwd="/w"))
    kept = store.mail.send(team, "bob", "read, never acknowledged", sender="team-lead")
    assert [e.msg_id for e in store.mail.unread(team, "bob")] == [kept.msg_id]
    done = store.mail.send(team, "bob", "acknowledged", sender="team-lead")
    assert store.mail.mark_delivered(team, "bob", [done]) == 1
    store.tasks.create(team, "claimed")
    assert store.tasks.claim(team, "1", "alice").success

    redis_server.kill_and_restart()

    after = RedisStore(parse_url(redis_server.url))
    assert [e.msg_id for e in after.mail.unread(team, "bob")] == [kept.msg_id]
    assert [(e.text, e.read) for e in after.mail.read_live(team, "bob")] == [
        ("read, never acknowledged", False), ("acknowledged", True),
    ]  # fmt: skip
    task = after.tasks.get(team, "1")
    assert (task.owner, task.status) == ("alice", "in_progress")
    assert after.tasks.create(team, "next").id == "2"  # the id counter came back too
