"""The delivery path kept short (issue 15): a teammate's turn-start state writes wait until its request has left (the
SDK's stream opening says so; a client that cannot say is given MARK_AFTER; a claimed task's turn marks at once), a
request is built without copying the conversation, and the path's marks (`diagnostics.stamp`) land in order."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from agentteams import diagnostics
from agentteams.agent import workers
from agentteams.mockapi import MockServer
from agentteams.model.anthropic_client import AnthropicClient, build_params
from agentteams.model.config import ModelConfig
from agentteams.model.types import ModelRequest, ModelResponse, StreamCallbacks, ToolSpec
from agentteams.store.api import new_envelope
from agentteams.store.file import spool
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.locking import FileLock
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.team.teammate import runtime as teammate_module
from tests.support.fake_model import FakeModel
from tests.support.runtime import WAIT, TeammateRig, quick_polls, running_teammate, teammate_rig
from tests.support.wait import wait_until

DONE = [{"type": "text", "text": "done"}]


WINDOW = 0.3  # how long a request waits, at most, for a state write that (before it has left) must not come


class Ordered:
    """A model client around a FakeModel that logs, in order, a request's arrival and its stream's opening; `opens`
    False: a client that never says when its answer began (the fallback's case). A request first gives a state write
    that would precede it WINDOW seconds to show up (`wrote`), so the order below is not won by a race."""

    def __init__(self, model: FakeModel, log: list[Any], *, opens: bool = True) -> None:
        self.model, self.log, self.opens = model, log, opens
        self.wrote = threading.Event()

    def complete(self, request: ModelRequest, callbacks: StreamCallbacks | None = None) -> ModelResponse:
        self.wrote.wait(WINDOW)
        self.log.append("request")
        cb = callbacks or StreamCallbacks()
        opened = cb.on_open

        def on_open() -> None:
            self.log.append("open")
            if opened is not None:
                opened()

        said = StreamCallbacks(on_text=cb.on_text, on_open=on_open if self.opens else None)
        return self.model.complete(request, said)


def _rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: FakeModel, log: list[Any], opens: bool) -> TeammateRig:
    quick_polls(monkeypatch)
    rig = teammate_rig(Layout(tmp_path / "cfg"), tmp_path, model)
    client = rig.runtime.session.agent.client = Ordered(model, log, opens=opens)
    teams, own = rig.runtime.teams, rig.runtime._own
    set_fields, write = teams.set_member_fields, own.write

    def logged_fields(team: str, name: str, **fields: Any) -> Any:
        log.append(("member", fields.get("is_active")))
        client.wrote.set()
        return set_fields(team, name, **fields)

    def logged_write(**fields: Any) -> None:
        log.append(("presence", fields.get("state")))
        write(**fields)

    monkeypatch.setattr(teams, "set_member_fields", logged_fields)
    monkeypatch.setattr(own, "write", logged_write)
    return rig


def _second_turn(rig: TeammateRig, log: list[Any]) -> list[Any]:
    """The log of the teammate's second turn (its first records its key and session id at once, see below)."""
    rig.from_lead("first")
    rig.wait_turns(1)
    del log[:]
    cast(Ordered, rig.runtime.session.agent.client).wrote.clear()  # the first turn's writes set it
    rig.from_lead("second")
    rig.wait_turns(2)
    return list(log)


def test_a_turn_s_state_writes_start_once_its_request_has_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(teammate_module, "MARK_AFTER", 60.0)  # only the stream's opening lets the writes go
    log: list[Any] = []
    rig = _rig(tmp_path, monkeypatch, FakeModel([DONE, DONE]), log, opens=True)
    with running_teammate(rig):
        turn = _second_turn(rig, log)
    request, opened = turn.index("request"), turn.index("open")
    active, working = turn.index(("member", True)), turn.index(("presence", "working"))
    assert request < opened < active < working, turn  # nothing of the turn's bookkeeping before the request
    assert turn.index(("member", False)) > working  # and idle again at its end
    assert rig.member().is_active is False


def test_a_client_that_never_says_its_answer_began_still_marks_the_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(teammate_module, "MARK_AFTER", 0.05)
    log: list[Any] = []
    model = FakeModel([DONE, DONE])
    rig = _rig(tmp_path, monkeypatch, model, log, opens=False)
    held: list[int] = []

    def hold(n: int) -> None:  # the answer is held until the member shows as working: MARK_AFTER lets the writes go
        wait_until(lambda: rig.member().is_active is True, WAIT, "isActive while the answer is held")
        held.append(n)

    model.before_answer = hold
    with running_teammate(rig):
        turn = _second_turn(rig, log)
    assert held == [0, 1] and "open" not in turn, turn
    assert turn.index(("member", True)) < turn.index(("presence", "working")) < turn.index(("member", False))


def test_the_first_turn_records_the_session_id_before_its_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lead killed while a teammate's first request is out resumes it with its conversation: the session id is in
    the member entry before any answer (no waiting for the request to leave, or for MARK_AFTER)."""
    monkeypatch.setattr(teammate_module, "MARK_AFTER", 60.0)
    model = FakeModel([DONE])
    rig = _rig(tmp_path, monkeypatch, model, [], opens=False)
    session = rig.runtime.ctx.session_id

    def hold(_n: int) -> None:
        wait_until(lambda: rig.member().session_id == session, WAIT, "the session id")

    model.before_answer = hold
    with running_teammate(rig):
        rig.from_lead("first")
        rig.wait_turns(1)


def test_a_claimed_task_s_turn_is_marked_working_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No unread message stands for a turn a claimed task started: its isActive is written at once, so its lead
    never takes the team for idle (nor a -p run for finished) while the request is out."""
    monkeypatch.setattr(teammate_module, "MARK_AFTER", 60.0)
    model = FakeModel([DONE, DONE])
    rig = _rig(tmp_path, monkeypatch, model, [], opens=False)
    held: list[int] = []

    def hold(n: int) -> None:
        if n == 1:  # the claimed task's request: the member must show as active before any answer
            wait_until(lambda: rig.member().is_active is True, WAIT, "isActive before the claimed task's answer")
        held.append(n)

    model.before_answer = hold
    with running_teammate(rig):
        rig.from_lead("first")
        rig.wait_turns(1)
        rig.tasks.create(rig.team, "Parse", "the grammar")
        rig.wait_turns(2)
    assert held == [0, 1]


def test_the_sdk_stream_opens_after_the_request_arrived_and_before_any_text() -> None:
    server = MockServer({"routes": [{"name": "main", "turns": [{"text": "one two three four", "chunk": 4}]}]}).start()
    try:
        client = AnthropicClient(ModelConfig(api_key="sk-ant-test-0123456789abcdef", base_url=server.base_url))
        order: list[str] = []
        callbacks = StreamCallbacks(
            on_open=lambda: order.append(f"open after {len(server.arrivals)} arrival(s)"),
            on_text=lambda _t: order.append("text"),
        )
        req = ModelRequest(model="claude-haiku-4-5", system="s", tools=[], messages=[{"role": "user", "content": "hi"}])
        client.complete(req, callbacks)
        client.close()
    finally:
        server.stop()
    assert order[0] == "open after 1 arrival(s)" and order.count("text") >= 2 and "open" not in "".join(order[1:])


def test_a_request_is_built_without_copying_or_touching_the_conversation() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    marked = {"type": "text", "text": "old", "cache_control": {"type": "ephemeral"}}
    messages: list[Any] = [
        {"role": "user", "content": [marked]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": "new"},
    ]
    before = json.dumps(messages)
    tools = [ToolSpec("Read", "reads", schema)]
    req = ModelRequest(model="claude-haiku-4-5", system="s", tools=tools, messages=messages)
    params = build_params(req)
    assert json.dumps(messages) == before  # the caller's stale marker stays where it was; no new one is added
    first = params["messages"][0]["content"][0]
    assert first is not marked and first["cache_control"] == {"type": "ephemeral"}  # re-marked on the copy (breakpoint)
    assert params["messages"][2]["content"] == [{"type": "text", "text": "new", "cache_control": {"type": "ephemeral"}}]
    assert params["tools"][0]["input_schema"] is schema  # shared, not copied: nothing writes into it
    assert build_params(req) == params  # deterministic


def test_a_send_marks_its_path_in_order_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = Layout(tmp_path / "cfg")
    teams = TeamStore(layout)
    team = teams.create("marks", cwd=str(tmp_path)).name
    teams.add_member(team, NewMember(name="bob", cwd=str(tmp_path)))
    stamps = tmp_path / "stamps"
    Mailbox(layout).send(team, "bob", "unmarked", sender=LEAD_NAME)
    assert not stamps.exists()
    monkeypatch.setenv(diagnostics.ENV_STAMPS, str(stamps))
    Mailbox(layout).send(team, "bob", "marked", sender=LEAD_NAME)
    lines = [line.split(" ") for line in stamps.read_text().splitlines()]
    marks = [what for _, _, what in lines]
    path = ["send", "locked", "filled", "fsynced", "renamed", "sent"]
    assert marks == path, marks
    times = [float(t) for t, _, _ in lines]
    assert times == sorted(times)


def test_a_kept_worker_runs_the_next_job_without_a_new_thread() -> None:
    pool = workers.Workers()
    ran: list[tuple[int, str]] = []
    done = threading.Semaphore(0)

    def job() -> None:
        ran.append((threading.get_ident(), threading.current_thread().name))
        done.release()

    pool.submit("one-model", job)
    assert done.acquire(timeout=WAIT)
    wait_until(lambda: len(pool._idle) == 1, WAIT, "the worker back in the idle list")
    idle = next(t for t in threading.enumerate() if t.ident == ran[0][0])
    assert idle.name == workers.IDLE_NAME  # not mistaken for a call still running
    before = threading.active_count()
    pool.submit("two-model", job)
    assert done.acquire(timeout=WAIT)
    assert threading.active_count() == before and ran[1] == (ran[0][0], "two-model")


def test_jobs_at_the_same_time_get_workers_of_their_own() -> None:
    release, inside = threading.Event(), threading.Semaphore(0)

    def held() -> None:
        inside.release()
        release.wait(WAIT)

    dones = [workers.started(f"held-{n}", held) for n in range(3)]
    for _ in range(3):
        assert inside.acquire(timeout=WAIT)  # all three run at once: none waits behind another
    release.set()
    assert all(d.wait(WAIT) for d in dones)


def _team_with_bob(tmp_path: Path) -> tuple[Mailbox, Path]:
    layout = Layout(tmp_path / "cfg")
    teams = TeamStore(layout)
    team = teams.create("direct", cwd=str(tmp_path)).name
    teams.add_member(team, NewMember(name="bob", cwd=str(tmp_path)))
    box = Mailbox(layout, teams)
    return box, box.inbox_path(team, "bob")


def test_an_uncontended_send_goes_in_without_the_spool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box, inbox = _team_with_bob(tmp_path)
    spooled: list[bytes] = []
    real_append = spool.spool_append

    def append(path: Path, record: bytes) -> None:
        spooled.append(record)
        real_append(path, record)

    monkeypatch.setattr(spool, "spool_append", append)
    box.send("direct", "bob", "one", sender=LEAD_NAME)
    box.send("direct", "bob", "two", sender=LEAD_NAME)
    assert spooled == [] and [e.text for e in box.read_live("direct", "bob")] == ["one", "two"]
    assert sorted(p.name for p in inbox.parent.iterdir() if p.name.startswith(".bob.json.spool")) == []
    lock = FileLock(inbox)
    lock.acquire()  # held: the next sender queues, so it spools (and the holder's successor commits it)
    sender = threading.Thread(target=box.send, args=("direct", "bob", "three"), kwargs={"sender": LEAD_NAME})
    sender.start()
    wait_until(lambda: len(spooled) == 1, WAIT, "the contended send to spool")
    lock.release()
    sender.join(WAIT)
    assert [e.text for e in box.read_live("direct", "bob")] == ["one", "two", "three"]


def test_an_uncontended_send_also_commits_what_others_spooled(tmp_path: Path) -> None:
    box, inbox = _team_with_bob(tmp_path)
    box.send("direct", "bob", "first", sender=LEAD_NAME)
    waiting = new_envelope("carol", "spooled before")  # a sender that spooled and has not yet queued
    spool.spool_append(inbox, b"\n" + json.dumps(waiting.to_json()).encode() + b"\n")
    box.send("direct", "bob", "mine", sender=LEAD_NAME)
    assert [e.text for e in box.read_live("direct", "bob")] == ["first", "spooled before", "mine"]
    assert not any(p.name.startswith(".bob.json.spool") for p in inbox.parent.iterdir())
    assert spool.committed(inbox, json.dumps(waiting.msg_id).encode())  # its sender passes through when it queues
