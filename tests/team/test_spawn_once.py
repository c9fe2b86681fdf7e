"""Idempotent spawns (issue 15, item 4): one Task call makes one member whatever retries happen. A spawn of a name a
live member holds returns that member and says so; a dead one's name gets `-2`; once it has left, the name is free."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.file.store import FileStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.presence import Presence, read_presence
from agentteams.store.protocol import IdleNotification
from agentteams.team.spawn.base import Handle, SpawnRequest
from agentteams.team.spawn.roster import Roster
from agentteams.team.spawn.spawners import TmuxSpawner
from tests.support.cli import Cli
from tests.support.fake_model import FakeModel, text
from tests.support.procs import cmdline, pid_alive, processes_with_env
from tests.support.runtime import TEAM, WAIT, RecordingSpawner, quick_polls, running_lead
from tests.support.team_run import assert_nothing_left, finish, lead_env, lead_in_tmux
from tests.support.team_script import REQUEST_ID, say
from tests.support.team_script import tool as tool_use
from tests.support.tmuxlab import Tmux
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


def twice_scenario() -> dict[str, Any]:
    """The lead spawns alice twice (she is busy until the test creates `go`), asks her to leave, then spawns her
    again; the first alice's opening turn waits for `go`, the second's says so and idles."""
    start = tool_use("Task", **{**spawn_call(), "prompt": "You are alice. START-alice"})
    lead = [
        tool_use("TeamCreate", team_name=TEAM),
        start,
        start,
        say("DUP-CHECKED"),
        {
            **tool_use("SendMessage", to="alice", message={"type": "shutdown_request", "reason": "again"}),
            "wait_for": "idle_notification",
        },
        say("Waiting for alice to leave."),
        {**start, "wait_for": "Teammate alice shut down"},
        say("The second alice started."),
        say("LEAD-DONE"),
    ]
    me = "Your name is alice"
    return {"routes": [
        {"name": "alice-shutdown", "match": {"system": me, "last_prompt": "shutdown_request"},
         "turns": [tool_use("SendMessage", to="team-lead",
                            message={"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True})] * 2},
        {"name": "alice-start", "match": {"system": me, "last_prompt": "START-alice"},
         "turns": [tool_use("Bash", command="while [ ! -e go ]; do sleep 0.05; done"), say("first alice done"),
                   say("SECOND-ALICE")]},
        {"name": "alice-other", "match": {"system": me}, "turns": [], "idle": "Noted."},
        {"name": "lead", "match": {"system": "You lead a team"}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip


def test_a_second_spawn_of_a_live_name_starts_no_pane_and_one_after_it_left_does(
    cli: Cli, config_root: Path, layout: Layout, tmp_path: Path, tmux: Tmux
) -> None:
    work = tmp_path / "work"
    work.mkdir()

    def lead_asked(needle: str) -> bool:
        return any(r.get("route") == "lead" and needle in json.dumps(r.get("body")) for r in server.arrivals)

    with MockServer(twice_scenario()) as server:
        _pane, rc = lead_in_tmux(tmux, cli, lead_env(config_root, server), work, tmp_path, "--teammate-mode", "tmux")
        wait_until(lambda: lead_asked("already a live member"), 60, "the lead's model to hear of the second spawn")

        def working_in_her_pane() -> bool:  # started before her pane: its id comes once the pane attached
            found = read_presence(layout, TEAM, "alice")
            return found is not None and found.state == "working" and bool(found.pane_id)

        wait_until(working_in_her_pane, 30, "alice at work, in her pane")
        first = read_presence(layout, TEAM, "alice")  # in her first turn, until `go` exists
        assert first is not None
        assert len(tmux.panes()) == 2, f"one pane for the lead, one for alice: {tmux.panes()}"
        assert len(teammate_commands(config_root)) == 1, teammate_commands(config_root)
        assert [m.name for m in TeamStore(layout).read(TEAM).members] == [LEAD_NAME, "alice"]
        assert lead_asked("nothing new was started.\\nagent_id: alice@proj"), "the tool result names the member"
        (work / "go").touch()  # the first alice ends her turn: the lead asks her to leave, then spawns alice again
        wait_until(lambda: _second_alice(server), 60, "a second alice to start")
        # her own record replaces the first alice's last one (which may land late) once she writes it
        wait_until(lambda: getattr(read_presence(layout, TEAM, "alice"), "pid", first.pid) != first.pid, 30,
                   "the second alice's presence record")  # fmt: skip
        second = read_presence(layout, TEAM, "alice")
        assert second is not None and second.pid != first.pid and second.pane_id != first.pane_id
        assert not pid_alive(first.pid) and first.pane_id not in tmux.panes()
        wait_until(lambda: len(teammate_commands(config_root)) == 1, 10, "one teammate process: the second alice")
        assert len(tmux.panes()) == 2
        run = finish(rc, tmp_path, server)
    assert run.rc == 0, run.err
    starts = [r for r in run.server.requests if r.get("route") == "alice-start"]
    assert [r.get("turn") for r in starts] == [0, 1, 2], "two alices in all: the first's two turns, the second's one"
    assert_nothing_left(layout, config_root, tmux)


def teammate_commands(config_root: Path) -> list[list[str]]:
    """The command lines of this test's teammate processes (each pane's `agentteams --agent-id ...`)."""
    pids = processes_with_env("CLAUDE_CONFIG_DIR", str(config_root))
    return [argv for argv in map(cmdline, pids) if "--agent-id" in argv]


def _second_alice(server: MockServer) -> bool:
    return [r.get("turn") for r in server.arrivals if r.get("route") == "alice-start"][-1:] == [2]


class PanesUp:
    """Stands in for the tmux server: every pane is up."""

    def pane_alive(self, pane_id: str) -> bool:
        return True


def test_an_earlier_member_s_last_record_does_not_make_a_new_pane_dead(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileStore(layout)
    store.teams.create(TEAM)
    spawner = TmuxSpawner(store, socket_path=str(tmp_path / "no-server.sock"))
    monkeypatch.setattr(spawner, "tmux", PanesUp())
    # the first alice's "exited", written as she left, after the lead had removed her record
    store.presence.write(TEAM, "alice", Presence(pid=DEAD_PID, session_id="s1", backend="tmux", pane_id="%1"))
    assert spawner.alive(Handle("alice", "tmux", pane_id="%2"), TEAM), "the new alice (pane %2) is starting"
    assert not spawner.alive(Handle("alice", "tmux", pane_id="%1"), TEAM)
    store.presence.write(TEAM, "alice", Presence(pid=os.getpid(), session_id="s2", backend="tmux", pane_id="%2"))
    assert spawner.alive(Handle("alice", "tmux", pane_id="%2"), TEAM)


class QuickSpawner(RecordingSpawner):
    """A teammate so quick that it has done its first turn and gone idle (its own isActive false, its idle notice
    sent) before the spawn returns to the lead."""

    def __init__(self, layout: Layout) -> None:
        super().__init__()
        self.store = FileStore(layout)

    def spawn(self, req: SpawnRequest) -> Handle:
        handle = super().spawn(req)
        self.store.teams.set_active(req.team, req.name, False)
        notice = IdleNotification(sender=req.name, timestamp=now_iso()).to_text()
        self.store.mail.send(req.team, LEAD_NAME, notice, sender=req.name)
        return handle


def test_a_teammate_idle_before_its_spawn_returns_stays_idle_and_wakes_the_lead(tmp_path: Path, layout: Layout) -> None:
    """The lead's own record of a start came after the teammate's isActive:false and said true again: the team never
    looked idle, and a headless lead waited for ever (a pane slow to start, in bench_team's spawn case)."""
    model = FakeModel([], default=text("Noted."))
    with running_lead(layout, tmp_path, model) as lead:
        quick = QuickSpawner(layout)
        lead.runtime.spawner = lead.runtime.roster.spawner = quick
        assert lead.runtime.spawn_teammate(spawn_call()).startswith("Spawned successfully.")
        member = TeamStore(layout).read(TEAM).member("alice")
        assert member is not None and member.is_active is False, "the lead overwrote the teammate's own isActive"
        wait_until(lambda: any("idle_notification" in str(r.messages) for r in model.requests), WAIT,
                   "the lead's model to hear that its whole team is idle")  # fmt: skip


def test_a_reserved_member_is_active_until_it_says_otherwise(layout: Layout) -> None:
    teams = TeamStore(layout)
    teams.create(TEAM)
    member, _ = teams.add_member_once(TEAM, NewMember(name="alice", is_active=True), lambda m: True)
    assert member.is_active is True and teams.read(TEAM).member("alice").is_active is True  # type: ignore[union-attr]
    teams.set_member_fields(TEAM, "alice", tmux_pane_id="%1", backend_type="tmux")
    keys = list(json.loads(layout.config_file(TEAM).read_text())["members"][1])
    assert keys[-2:] == ["backendType", "isActive"], "the key order a real claude's own toggle leaves"
    teams.add_member(TEAM, NewMember(name="bob"))  # no model: as a real claude's lead may leave a member
    teams.set_member_fields(TEAM, "bob", model="claude-x")
    keys = list(json.loads(layout.config_file(TEAM).read_text())["members"][2])
    assert keys[-1] == "model", "any other new key is appended, as a real claude's assignment does"
