"""The lead's runtime on the Redis store: `agentteams set` requests go through the team's Redis list to the running
lead and back (the shell blocks on its answer's list), a request nobody answers is withdrawn, and the CLI reaches a
lead whose store is Redis the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.pids import LeadProcess
from agentteams.store.atomicjson import epoch_ms
from agentteams.store.paths import Layout
from agentteams.store.redis_conn import Keys, parse_url
from agentteams.store.redis_store import RedisStore
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
