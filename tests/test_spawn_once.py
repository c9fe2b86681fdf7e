"""Idempotent spawns (issue 15, item 4): one Task call makes one member whatever retries happen. A spawn of a name a
live member holds returns that member and says so; a dead one's name gets `-2`; once it has left, the name is free."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from agentteams.store.files import FileStore
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.presence import Presence
from agentteams.store.teams import NewMember, TeamStore
from agentteams.team.roster import Roster
from agentteams.team.spawning import Handle, SpawnRequest
from tests.support.fake_model import FakeModel, text
from tests.support.runtime import TEAM, WAIT, RecordingSpawner, quick_polls, running_lead
from tests.support.wait import wait_until

DEAD_PID = 2**22 + 12345  # above pid_max's default: never a live process


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_polls(monkeypatch)


def spawn_call(name: str = "alice") -> dict[str, object]:
    return {"name": name, "team_name": TEAM, "description": "worker", "prompt": f"You are {name}."}


def test_a_live_name_is_returned_and_nothing_is_written(layout: Layout) -> None:
    teams = TeamStore(layout)
    teams.create(TEAM)
    first, added = teams.add_member_once(TEAM, NewMember(name="alice"), lambda m: True)
    assert added and first.name == "alice"
    before = layout.config_file(TEAM).read_bytes()
    again, added = teams.add_member_once(TEAM, NewMember(name="Alice"), lambda m: True)  # one inbox: the same name
    assert not added and again.agent_id == first.agent_id
    assert layout.config_file(TEAM).read_bytes() == before, "a returned member must not rewrite the config"
    dead, added = teams.add_member_once(TEAM, NewMember(name="alice"), lambda m: False)
    assert added and dead.name == "alice-2", "a member that is not live keeps its entry; the newcomer gets -2"


def test_concurrent_reservations_of_one_name_make_one_member(layout: Layout) -> None:
    TeamStore(layout).create(TEAM)
    start = threading.Barrier(6)
    results: list[bool] = []

    def join() -> None:
        start.wait(WAIT)
        _, added = TeamStore(layout).add_member_once(TEAM, NewMember(name="alice"), lambda m: True)
        results.append(added)

    threads = [threading.Thread(target=join) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert sorted(results) == [False] * 5 + [True]
    assert [m.name for m in TeamStore(layout).read(TEAM).members] == [LEAD_NAME, "alice"]


def test_liveness_comes_from_the_handle_the_reservation_or_the_presence_record(layout: Layout) -> None:
    store = FileStore(layout)
    store.teams.create(TEAM)
    spawner = RecordingSpawner()
    roster = Roster(store, spawner)
    alice, added = roster.reserve(TEAM, NewMember(name="alice"))
    assert added and roster.live(TEAM, alice), "a name being started is live to a second spawn"
    roster.started("alice", Handle("alice", "in-process"))
    assert roster.live(TEAM, alice)
    spawner.kill("alice")
    assert not roster.live(TEAM, alice)
    bob = store.teams.add_member(TEAM, NewMember(name="bob"))  # not ours to handle (another lead's, say)
    assert not roster.live(TEAM, bob), "no handle, no record: nothing says it runs"
    store.presence.write(TEAM, "bob", Presence(pid=os.getpid(), session_id="s", backend="tmux"))
    assert roster.live(TEAM, bob)
    store.presence.write(TEAM, "bob", Presence(pid=DEAD_PID, session_id="s", backend="tmux"))
    assert not roster.live(TEAM, bob)
    store.presence.write(TEAM, "bob", Presence(pid=os.getpid(), session_id="s", backend="tmux", state="exited"))
    assert not roster.live(TEAM, bob)
    assert roster.reserve(TEAM, NewMember(name="bob"))[0].name == "bob-2"


def test_the_same_spawn_twice_in_a_turn_makes_one_member_and_the_model_is_told(tmp_path: Path, layout: Layout) -> None:
    call = {"type": "tool_use", "id": "toolu_spawn_alice", "name": "Task", "input": spawn_call()}
    model = FakeModel([[call, dict(call)], [text("alice is at work.")]])  # the same tool_use, sent twice
    with running_lead(layout, tmp_path, model) as lead:
        lead.runtime.submit("Start alice.")
        assert lead.runtime.wait_idle(WAIT)
        assert [r.name for r in lead.spawner.spawned] == ["alice"]
        assert lead.members() == [LEAD_NAME, "alice"]
        assert [e.text for e in lead.mailbox.read_live(TEAM, "alice")] == ["You are alice."], "one prompt only"
        results = [b for b in model.requests[1].messages[-1]["content"] if b.get("type") == "tool_result"]
        first, second = (str(b["content"]) for b in results)
        assert first.startswith("Spawned successfully.") and "agent_id: alice@proj" in first
        assert "alice is already a live member of team proj" in second and "agent_id: alice@proj" in second
        assert not any(b.get("is_error") for b in results)


def test_a_spawn_after_the_member_died_starts_a_new_one(tmp_path: Path, layout: Layout) -> None:
    with running_lead(layout, tmp_path, FakeModel([], default=text("Noted."))) as lead:
        assert lead.runtime.spawn_teammate(spawn_call()).startswith("Spawned successfully.")
        assert "already a live member" in lead.runtime.spawn_teammate(spawn_call())
        lead.spawner.kill("alice")
        wait_until(lambda: "alice" not in lead.members(), WAIT, "the lead to notice alice died")
        assert lead.runtime.spawn_teammate(spawn_call()).startswith("Spawned successfully.")
        assert [r.name for r in lead.spawner.spawned] == ["alice", "alice"]
        assert lead.members() == [LEAD_NAME, "alice"]


class HeldSpawner(RecordingSpawner):
    """A spawner whose first start takes until the test lets it go: a second call arrives meanwhile."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def spawn(self, req: SpawnRequest) -> Handle:
        self.entered.set()
        assert self.release.wait(WAIT), "the test never let the start finish"
        return super().spawn(req)


def test_a_spawn_arriving_while_the_same_name_starts_returns_it(tmp_path: Path, layout: Layout) -> None:
    with running_lead(layout, tmp_path, FakeModel([], default=text("Noted."))) as lead:
        held = HeldSpawner()
        lead.runtime.spawner = lead.runtime.roster.spawner = held
        answers: list[str] = []
        first = threading.Thread(target=lambda: answers.append(lead.runtime.spawn_teammate(spawn_call())))
        first.start()
        assert held.entered.wait(WAIT)
        second = lead.runtime.spawn_teammate(spawn_call())  # while the first is still starting alice
        held.release.set()
        first.join(WAIT)
        assert "already a live member" in second and "agent_id: alice@proj" in second
        assert answers and answers[0].startswith("Spawned successfully.")
        assert [r.name for r in held.spawned] == ["alice"]
        config = json.loads(layout.config_file(TEAM).read_text())
        assert [m["name"] for m in config["members"]] == [LEAD_NAME, "alice"]
