"""Many real OS processes on the same files at once: nothing lost, nothing duplicated, nothing claimed twice.

Every worker is a separate interpreter (`tests.support.workers`) on the same config root; all start,
warm up, and are released together by a go file so they really contend.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agentteams.store.file.inbox_file import in_flight_file, spool_file
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.paths import Layout
from agentteams.store.records import COLORS
from tests.support.workers import Gate

TEAM = "race"


@pytest.fixture
def team(config_root: Path) -> str:
    store = TeamStore()
    store.create(TEAM)
    store.add_member(TEAM, NewMember(name="alice"))
    return TEAM


def _inbox(layout: Layout) -> Path:
    return layout.inbox_file(TEAM, "alice")


def _load_array(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_bytes().decode("utf-8"))
    assert isinstance(data, list), f"{path} is not a JSON array"
    return data


def test_eight_writers_into_one_inbox_lose_nothing(gate: Gate, team: str, layout: Layout) -> None:
    writers, per_writer = 8, 500
    for i in range(writers):
        gate.start(f"w{i}", "send", team, "alice", f"w{i}", str(per_writer))
    gate.release()
    out = gate.finish(timeout=150)

    for name, lines in out.items():
        assert lines == [f"ack {n}" for n in range(per_writer)], f"{name} did not finish its sends"
    inbox = _inbox(layout)
    items = _load_array(inbox)
    assert len(items) == writers * per_writer
    assert len({m["msg_id"] for m in items}) == len(items), "a message was written twice"
    by_writer: dict[str, list[int]] = {}
    for m in items:
        writer, seq = m["text"].split(":")
        assert m["from"] == writer
        assert m["read"] is False
        by_writer.setdefault(writer, []).append(int(seq))
    for i in range(writers):
        # present once each, and in the writer's own send order
        assert by_writer.get(f"w{i}") == list(range(per_writer)), f"w{i}'s messages are missing or reordered"
    assert len(Mailbox().read_live(team, "alice")) == writers * per_writer
    spooled = spool_file(inbox).read_bytes() if spool_file(inbox).exists() else b""
    assert spooled.strip() == b"", "sends returned with messages still spooled"
    assert not in_flight_file(inbox).exists(), "a commit was left half done"
    assert not list(inbox.parent.glob("*.corrupt-*"))


def test_sixteen_members_join_at_once(gate: Gate, team: str, layout: Layout) -> None:
    names = [f"m{i}" for i in range(16)]
    for name in names:
        gate.start(name, "join", team, name)
    gate.release()
    out = gate.finish(timeout=60)

    for name, lines in out.items():
        assert lines and lines[-1].startswith(f"joined {name} "), f"{name}: {lines}"
    config = TeamStore().read(team)
    joined = [m for m in config.members if m.name != "alice" and m.agent_id != config.lead_agent_id]
    assert sorted(m.name for m in joined) == sorted(names)
    assert len(config.members) == 1 + 1 + len(names)  # lead, alice, the sixteen
    assert len({m.agent_id for m in config.members}) == len(config.members)
    # colours follow join order (the config's member order): the palette, then cycling
    teammates = [m for m in config.members if m.agent_id != config.lead_agent_id]
    assert [m.color for m in teammates] == [COLORS[k % len(COLORS)] for k in range(len(teammates))]
    raw = json.loads(layout.config_file(team).read_bytes().decode("utf-8"))
    assert [m["name"] for m in raw["members"]] == [m.name for m in config.members]


def test_concurrent_task_creation_never_reuses_an_id(gate: Gate, team: str, layout: Layout) -> None:
    procs, per_proc = 4, 200
    for i in range(procs):
        gate.start(f"c{i}", "create", team, f"c{i}", str(per_proc))
    gate.release()
    out = gate.finish(timeout=120)

    created: dict[str, str] = {}  # id -> subject, from the workers' own reports
    for name, lines in out.items():
        assert len(lines) == per_proc, f"{name} created {len(lines)} tasks"
        for line in lines:
            _, tid, subject = line.split(" ")
            assert tid not in created, f"id {tid} handed out twice ({created.get(tid)}, {subject})"
            created[tid] = subject
    total = procs * per_proc
    assert sorted(int(t) for t in created) == list(range(1, total + 1))
    files = sorted(int(p.stem) for p in layout.task_dir(team).glob("*.json"))
    assert files == list(range(1, total + 1))
    on_disk = {t.id: t.subject for t in TaskStore().list_tasks(team)}
    assert on_disk == created


def test_claims_race_each_task_claimed_once(gate: Gate, team: str) -> None:
    store = TaskStore()
    blocker = store.create(team, "blocker that never finishes")
    store.update(team, blocker.id, owner="someone-else", assigned_by="someone-else")
    blocked: set[str] = set()
    claimable: set[str] = set()
    for n in range(1, 101):
        if n % 10 == 0:
            blocked.add(store.create(team, f"blocked {n}", blocked_by=[blocker.id]).id)
        else:
            claimable.add(store.create(team, f"free {n}").id)

    agents = [f"agent{i}" for i in range(8)]
    for agent in agents:
        gate.start(agent, "claim", team, agent)
    gate.release()
    out = gate.finish(timeout=120)

    claims: dict[str, str] = {}
    for agent, lines in out.items():
        assert lines[-1] == "done task_not_found", f"{agent}: {lines[-1:]}"
        for line in lines[:-1]:
            tid = line.removeprefix("claimed ")
            assert tid not in claims, f"task {tid} claimed by both {claims.get(tid)} and {agent}"
            claims[tid] = agent
    assert set(claims) == claimable
    assert len(set(claims.values())) > 1, "one agent claimed everything: the race did not happen"
    tasks = {t.id: t for t in store.list_tasks(team)}
    for tid, agent in claims.items():
        assert (tasks[tid].owner, tasks[tid].status) == (agent, "in_progress")
    for tid in blocked:
        assert (tasks[tid].owner, tasks[tid].status) == (None, "pending")
    assert (tasks[blocker.id].owner, tasks[blocker.id].status) == ("someone-else", "pending")


def test_our_writers_race_real_cli_writer_and_pruner(gate: Gate, team: str, layout: Layout) -> None:
    ours, theirs, per_writer = 3, 2, 150
    inbox = _inbox(layout)
    Mailbox().send(team, "alice", "seed:0", sender="seed")  # creates the inbox the CLI's lock needs
    stop = gate.dir / "stop-pruner"
    for i in range(ours):
        gate.start(f"our{i}", "send", team, "alice", f"our{i}", str(per_writer))
    for i in range(theirs):
        gate.start(f"cc{i}", "ccsend", str(inbox), f"cc{i}", str(per_writer))
    pruner = gate.start("pruner", "ccprune", str(inbox), str(stop))
    gate.release()
    writers = [w for w in gate.workers if w is not pruner]
    results = {w.name: w.finish(timeout=120) for w in writers}
    stop.touch()
    pruned_lines = pruner.finish(timeout=30)

    sent: set[str] = {"seed:0"}
    failed = 0
    for name, lines in results.items():
        if name.startswith("our"):
            assert lines == [f"ack {n}" for n in range(per_writer)], f"{name} did not finish its sends"
            sent.update(f"{name}:{n}" for n in range(per_writer))
        else:
            assert len(lines) == per_writer
            for line in lines:
                verdict, seq = line.split(" ")[:2]
                if verdict == "ok":
                    sent.add(f"{name}:{seq}")
                else:
                    failed += 1  # the CLI gave up after its retries: that message was never sent
    assert pruned_lines[-1].startswith("prunes ")
    taken = [json.loads(line.removeprefix("took ")) for line in pruned_lines[:-1]]
    remaining = _load_array(inbox)
    seen = Counter(m["text"] for m in [*taken, *remaining])
    missing = sent - set(seen)
    assert not missing, f"{len(missing)} sent messages lost, e.g. {sorted(missing)[:5]}"
    dupes = {t: c for t, c in seen.items() if c > 1}
    assert not dupes, f"messages delivered more than once: {list(dupes.items())[:5]}"
    unexpected = set(seen) - sent
    assert not unexpected, f"messages whose send failed showed up: {sorted(unexpected)[:5]}"
    assert len(taken) > 0, "the pruner never took anything: the race did not happen"
    cc_ok = len([t for t in sent if t.startswith("cc")])
    assert cc_ok + failed == theirs * per_writer
    assert cc_ok > 0, "every real-CLI send failed"
