"""Nodes in the fast tier: where a teammate is placed (team/nodes/placement.py), what a spawn order carries (no secret),
and a lead's NodeSpawner and a NodeRunner talking through the file store in one process (a stand-in spawner on
the node's side, a real git clone for an order naming a repository)."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentteams.errors import AgentTeamsError
from agentteams.settings.types import Settings
from agentteams.store.api import NewMember
from agentteams.store.file.store import FileStore
from agentteams.store.node_records import NodeOrder, NodeRecord
from agentteams.store.signing import Keyring
from agentteams.team.nodes.node_loop import NodeRunner
from agentteams.team.nodes.placement import Placement, PlacementError, choose
from agentteams.team.nodes.spawner import NodeSpawner, _order
from agentteams.team.spawn.base import SpawnRequest
from tests.support.runtime import RecordingSpawner
from tests.support.wait import wait_until


def node(name: str, slots: int = 2, running: list[str] | None = None) -> NodeRecord:
    return NodeRecord(name, "h", slots, "0.1.0", running=running or [])


def test_without_nodes_a_teammate_stays_on_the_lead_machine() -> None:
    assert choose(Placement(), [], {}) is None
    assert choose(Placement(node="local"), [node("n1")], {}) is None
    with pytest.raises(PlacementError, match="no node is registered"):
        choose(Placement(repo="https://example.com/r.git"), [], {})


def test_the_least_loaded_node_with_a_free_slot_is_chosen() -> None:
    nodes = [node("n1", 2, ["a@t"]), node("n2", 4, ["b@t"]), node("n3", 1)]
    assert choose(Placement(), nodes, {}).name == "n3"  # type: ignore[union-attr]
    # n3's one slot taken by this lead since n3's last beat: n2 (1 of 4) is less loaded than n1 (1 of 2)
    assert choose(Placement(), nodes, {"n3": ["c@t"]}).name == "n2"  # type: ignore[union-attr]
    full = {"n1": ["x@t"], "n2": ["p@t", "q@t", "r@t"], "n3": ["c@t"]}
    with pytest.raises(PlacementError, match=r"every node is full \(n1 2/2, n2 4/4, n3 1/1\)"):
        choose(Placement(), nodes, full)


def test_a_named_node_must_be_registered() -> None:
    nodes = [node("n1"), node("n2")]
    assert choose(Placement(node="n2"), nodes, {}).name == "n2"  # type: ignore[union-attr]
    with pytest.raises(PlacementError, match=r"no node named 'n9' is registered \(live nodes: n1, n2\)"):
        choose(Placement(node="n9"), nodes, {})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"node": 3}, "node must be a non-empty string"),
        ({"commit": "abc"}, "commit needs repo"),
        ({"node": "n1", "cwd": "/x"}, "cwd and isolation are directories of your machine"),
        ({"node": "local", "repo": "u"}, "repo and commit are for a teammate on a node"),
    ],
)
def test_bad_placement_inputs_are_one_line(args: dict[str, object], message: str) -> None:
    with pytest.raises(PlacementError, match=message):
        Placement.of(args)


def test_a_teammate_with_a_directory_of_the_lead_stays_with_the_lead() -> None:
    assert Placement.of({"cwd": "/x"}).node == "local"
    assert Placement.of({"isolation": "worktree"}).node == "local"
    assert Placement.of({"node": " n1 "}) == Placement(node="n1")


def test_a_spawn_order_carries_no_secret(tmp_path: Path) -> None:
    settings = Settings(env={"ANTHROPIC_API_KEY": "sk-secret-1"}, merged={"env": {"ANTHROPIC_API_KEY": "sk-secret-1"},
                                                                          "model": "opus"})  # fmt: skip
    key = Keyring().new_lead_key("proj", "alice")
    req = SpawnRequest("alice", "proj", "blue", tmp_path, "sess", "claude-opus-4-7", lead_key=key, settings=settings,
                       placement=Placement(node="n1"))  # fmt: skip
    text = json.dumps(_order(req).to_json())
    assert "sk-secret-1" not in text
    assert json.loads(text)["settings"] == '{"model":"opus"}'
    assert json.loads(text)["lead_key"] == key.argument()  # the public half only: the private one stays in the lead


@contextmanager
def running_node(store: FileStore, workdir: Path, slots: int = 2) -> Iterator[tuple[NodeRunner, RecordingSpawner]]:
    spawner = RecordingSpawner()
    runner = NodeRunner(store, NodeRecord("n1", "h", slots, "0.1.0"), spawner, workdir, beat=0.05)
    stop = threading.Event()
    thread = threading.Thread(target=runner.run, args=(stop,), name="node-n1")
    thread.start()
    try:
        wait_until(lambda: store.nodes.read("n1") is not None, 5, "the node to register")
        yield runner, spawner
    finally:
        stop.set()
        thread.join(10)
    assert store.nodes.read("n1") is None, "a stopped node unregisters"


def req(name: str, tmp_path: Path, **place: str) -> SpawnRequest:
    return SpawnRequest(name, "proj", "blue", tmp_path, "sess", "claude-opus-4-7", placement=Placement(**place))


def test_a_lead_places_on_a_node_and_sees_its_teammate_live_until_stopped(tmp_path: Path) -> None:
    store = FileStore()
    store.teams.create("proj")
    lead = NodeSpawner(store, RecordingSpawner(), reply_timeout=5)
    (tmp_path / "w").mkdir()
    with running_node(store, tmp_path / "w", slots=1) as (runner, on_node):
        store.teams.add_member("proj", NewMember("alice", cwd=str(tmp_path)))
        handle = lead.spawn(req("alice", tmp_path))
        assert [r.name for r in on_node.spawned] == ["alice"] and on_node.spawned[0].cwd == tmp_path / "w"
        member = store.teams.read("proj").member("alice")
        assert member is not None and (member.node, member.cwd) == ("n1", str(tmp_path / "w"))
        assert lead.alive(handle, "proj")
        other_lead = NodeSpawner(store, RecordingSpawner(), reply_timeout=5)  # its one slot is taken: refused
        with pytest.raises(AgentTeamsError, match=r"node n1: full \(1/1 slots\)"):
            other_lead.spawn(req("bob", tmp_path, node="n1"))
        lead.stop(handle)
        wait_until(lambda: on_node.stopped == ["alice"], 5, "the node to stop alice")
        wait_until(lambda: getattr(store.nodes.read("n1"), "running", None) == [], 5, "alice gone from the record")
    assert runner.running == {}


def test_an_order_with_a_repository_gets_a_fresh_clone_at_its_commit(tmp_path: Path) -> None:
    repo = tmp_path / "origin"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    commits = []
    for text in ("one", "two"):
        (repo / "f.txt").write_text(text)
        subprocess.run([*git, "-C", str(repo), "add", "f.txt"], check=True)
        subprocess.run([*git, "-C", str(repo), "commit", "-qm", text], check=True)
        commits.append(subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                                      check=True).stdout.strip())  # fmt: skip
    store = FileStore()
    (tmp_path / "w").mkdir()
    with running_node(store, tmp_path / "w") as (_runner, on_node):
        order = NodeOrder("spawn", "proj", "alice", repo=str(repo), commit=commits[0])
        store.nodes.order("n1", order)
        reply = store.nodes.await_reply(order.order_id, 10)
        assert reply is not None and reply.ok, reply
        clone = tmp_path / "w" / "clones" / "proj" / "alice"
        assert reply.cwd == str(clone) and on_node.spawned[0].cwd == clone
        assert (clone / "f.txt").read_text() == "one", "the clone is at the commit asked for"
        again = NodeOrder("spawn", "proj", "bob", repo=str(tmp_path / "nowhere"))
        store.nodes.order("n1", again)
        failed = store.nodes.await_reply(again.order_id, 10)
        assert failed is not None and not failed.ok
        assert failed.error.startswith("could not start bob: git clone") and "\n" not in failed.error


def test_status_judges_a_node_member_by_its_node(tmp_path: Path) -> None:
    from agentteams.store.presence import Presence
    from agentteams.team.status_view import PaneTable, build_view
    from agentteams.ui.dashboard import plain_team

    store = FileStore()
    store.teams.create("proj")
    store.teams.add_member("proj", NewMember("alice", cwd=str(tmp_path)))
    store.teams.set_member_fields("proj", "alice", node="n1", backend_type="in-process")
    far_pid = 2**22 + 12345  # a process of another machine: not one here
    store.presence.write("proj", "alice", Presence(far_pid, "s", "in-process", state="working", heartbeat_ms=1000))

    def alice() -> tuple[str, str]:
        view = build_view(store, store.teams.read("proj"), PaneTable(None))
        row = next(line for line in plain_team(view).splitlines() if line.split()[:1] == ["alice"])
        return next(m.state for m in view.members if m.name == "alice"), row

    store.nodes.register(NodeRecord("n1", "h", 2, "0.1.0", running=["alice@proj"]))
    state, row = alice()
    assert state == "working" and "node n1 in-process" in row  # its pid is not this machine's to check
    store.nodes.register(NodeRecord("n1", "h", 2, "0.1.0", running=[]))
    assert alice()[0] == "dead"
    store.nodes.remove("n1")
    assert alice()[0] == "dead"


def test_attach_names_the_node_and_host_to_run_it_on(tmp_path: Path) -> None:
    from agentteams.cli.commands.attach import _elsewhere

    store = FileStore()
    store.teams.create("proj")
    member = store.teams.add_member("proj", NewMember("alice", cwd=str(tmp_path)))
    _elsewhere(store, "proj", member)  # on the lead's machine: attach goes on as before
    member.node = "n1"
    with pytest.raises(AgentTeamsError, match=r"alice ran on node n1, which is gone \(no heartbeat\)"):
        _elsewhere(store, "proj", member)
    store.nodes.register(NodeRecord("n1", "build-box-7", 2, "0.1.0", mode="tmux", running=["alice@proj"]))
    with pytest.raises(AgentTeamsError) as refused:
        _elsewhere(store, "proj", member)
    assert str(refused.value) == (
        "alice runs on node n1, host build-box-7: run `agentteams attach proj alice` there "
        "(or `agentteams logs proj alice` here)"
    )


def test_a_team_file_role_names_its_node_and_export_writes_it_back() -> None:
    from agentteams.store.records import Member, TeamConfig
    from agentteams.team.teamfile.export import export_team
    from agentteams.team.teamfile.schema import parse
    from agentteams.team.teamfile.seeding import spawn_args

    lead = Member(agent_id="team-lead@calc", name="team-lead", joined_at=1, cwd="/w/repo")
    alice = Member(agent_id="alice@calc", name="alice", joined_at=1, prompt="Go.", cwd="/node/work", node="gpu1")
    config = TeamConfig(name="calc", created_at=1, lead_agent_id=lead.agent_id, members=[lead, alice])
    (role,) = parse(export_team(config, [])).roles
    assert (role.node, role.cwd) == ("gpu1", None)  # the node's directory is the node's business
    assert spawn_args(role, "calc", Path("/w/repo"))["node"] == "gpu1"


def test_a_relaunch_goes_on_where_its_conversation_is(tmp_path: Path) -> None:
    store = FileStore()
    store.nodes.register(NodeRecord("n1", "h", 4, "0.1.0"))
    local = RecordingSpawner()
    resumed = req("alice", tmp_path)
    resumed.resume = "session-1"
    NodeSpawner(store, local, reply_timeout=0.2).spawn(resumed)  # no node answers: it must not be asked
    assert [r.name for r in local.spawned] == ["alice"]
