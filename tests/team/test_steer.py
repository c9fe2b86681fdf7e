"""Mid-turn delivery ("steer"), in process: a message that arrives while its recipient is in a turn goes in at the
next tool result, after the results, and is marked read only once a model request has carried it."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from agentteams.agent.session import Session, SessionOptions
from agentteams.model.types import Block, ModelRequest
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.protocol import ShutdownRequest
from agentteams.store.transcripts.reader import load
from agentteams.team.delivery import TeamEvent
from agentteams.ui.render import Renderer, make_console
from tests.support.fake_model import FakeModel, text, tool
from tests.support.runtime import TEAM, WAIT, Events, quick_polls, running_lead, running_teammate, teammate_rig
from tests.support.transcript_checks import faults
from tests.support.wait import wait_until

SIX_CALLS = [[tool("TaskList")] for _ in range(6)]


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_polls(monkeypatch)


def inbox(layout: Layout, agent: str) -> list[dict[str, Any]]:
    """The inbox file as it is on disk."""
    entries: list[dict[str, Any]] = json.loads(layout.inbox_file(TEAM, agent).read_text(encoding="utf-8"))
    return entries


def read_flag(layout: Layout, agent: str, marker: str) -> bool | None:
    [entry] = [e for e in inbox(layout, agent) if marker in e["text"]]
    return entry.get("read")


def last_user(request: ModelRequest) -> list[dict[str, Any]]:
    content = request.messages[-1]["content"]
    assert request.messages[-1]["role"] == "user" and isinstance(content, list)
    return list(content)


def test_a_message_to_a_busy_teammate_goes_in_at_the_next_tool_result(tmp_path: Path, layout: Layout) -> None:
    marks: dict[int, bool | None] = {}
    model = FakeModel([*SIX_CALLS, [text("Done.")]])
    rig = teammate_rig(layout, tmp_path, model)

    def before(n: int) -> None:
        if n == 1:  # the model is choosing the 2nd call: the message lands while the turn runs
            rig.mailbox.send(TEAM, rig.name, "STEER-ALICE change of plan", sender="bob", summary="plan")
        if n in (2, 3):  # during the request that carries it, then after its answer
            marks[n] = read_flag(layout, rig.name, "STEER-ALICE")

    model.before_answer = before
    rig.from_lead("START work")
    with running_teammate(rig):
        rig.wait_turns(1)
    carried = [n for n, r in enumerate(model.requests) if "STEER-ALICE" in json.dumps(r.messages[-1])]
    assert carried == [2], "the 3rd request of the turn carries it, and only that one as its newest message"
    blocks = last_user(model.requests[2])
    assert [b["type"] for b in blocks] == ["tool_result", "text"]  # after the results: the cached prefix holds
    assert blocks[1]["text"].startswith('<teammate-message teammate_id="bob"') and 'summary="plan"' in blocks[1]["text"]
    assert model.requests[2].messages[:-1] == [*model.requests[1].messages, model.requests[2].messages[-2]]  # a prefix
    assert marks == {2: False, 3: True}, "read only once the request that carried it was answered"
    assert model.calls == 7, "one turn: the message did not start another"
    path = rig.runtime.session.transcript.path
    assert load(path).messages == rig.runtime.session.agent.messages  # the transcript keeps it where it went in
    assert faults(path.read_text(encoding="utf-8"), rig.runtime.session.options.session_id) == []


def test_a_shutdown_request_mid_turn_waits_for_the_turns_end_and_then_comes_first(
    tmp_path: Path, layout: Layout
) -> None:
    approve = tool("SendMessage", to=LEAD_NAME, message={"type": "shutdown_response", "request_id": "stop-1",
                                                          "approve": True})  # fmt: skip
    model = FakeModel([*SIX_CALLS[:3], [text("Done.")], [approve]])
    rig = teammate_rig(layout, tmp_path, model)

    def before(n: int) -> None:
        if n == 1:
            stop = ShutdownRequest(request_id="stop-1", sender=LEAD_NAME, reason="wrap up", timestamp=now_iso())
            rig.from_lead(stop.to_text())
            rig.mailbox.send(TEAM, rig.name, "PEER-NOTE hello", sender="bob")

    model.before_answer = before
    rig.from_lead("START work")
    with running_teammate(rig):
        wait_until(lambda: rig.thread is not None and not rig.thread.is_alive(), WAIT, "alice to approve and exit")
    mid = last_user(model.requests[2])
    assert "PEER-NOTE" in json.dumps(mid) and "shutdown_request" not in json.dumps(mid), "the plain message only"
    assert "shutdown_request" in model.user_text(4), "the next turn opens with it"
    assert model.calls == 5, "approved: it exits without another request"


def test_a_typed_line_and_a_teammate_message_reach_a_busy_lead(tmp_path: Path, layout: Layout) -> None:
    marks: dict[int, bool | None] = {}
    events = Events()
    model = FakeModel([*SIX_CALLS, [text("LEAD-DONE")]])
    with running_lead(layout, tmp_path, model, "alice", events=events) as rig:

        def before(n: int) -> None:
            if n == 1:
                rig.runtime.submit("TYPED-LINE use the other file")
                rig.mailbox.send(TEAM, LEAD_NAME, "ALICE-NEWS found it", sender="alice")
                wait_until(lambda: "message" in events.kinds("alice"), WAIT, "the lead to take alice's message")
            if n in (2, 3):
                marks[n] = read_flag(layout, LEAD_NAME, "ALICE-NEWS")

        model.before_answer = before
        rig.runtime.submit("go")
        assert rig.runtime.wait_idle(WAIT)
    carried = [n for n, r in enumerate(model.requests) if "TYPED-LINE" in json.dumps(r.messages[-1])]
    assert carried == [2]
    blocks = last_user(model.requests[2])
    assert [b["type"] for b in blocks] == ["tool_result", "text"]
    said = blocks[1]["text"]
    assert (
        '<teammate-message teammate_id="alice"' in said
        and "ALICE-NEWS" in said
        and said.endswith("TYPED-LINE use the other file")
    )
    assert marks == {2: False, 3: True}
    assert model.calls == 7, "the typed line did not wait for a turn of its own"
    assert "steered" in events.kinds(LEAD_NAME)


def test_a_line_typed_after_the_last_tool_result_starts_the_next_turn(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[tool("TaskList")], [text("FIRST")], [text("SECOND")]])
    with running_lead(layout, tmp_path, model) as rig:
        model.before_answer = lambda n: rig.runtime.submit("LATE-LINE") if n == 1 else None
        rig.runtime.submit("go")
        wait_until(lambda: model.calls == 3, WAIT, "the late line's own turn")
        assert rig.runtime.wait_idle(WAIT)
    assert model.requests[2].messages[-1] == {"role": "user", "content": "LATE-LINE"}


def test_the_person_sees_what_went_in_mid_turn_and_to_whom() -> None:
    out = io.StringIO()
    renderer = Renderer(make_console(False))
    renderer.console.file = out
    renderer.team_event(TeamEvent("steered", "alice", "a message from bob"))
    renderer.team_event(TeamEvent("steered", LEAD_NAME, "“use the other file”"))
    assert out.getvalue().splitlines() == [
        "↳ sent to alice's model mid-turn: a message from bob",
        "↳ sent to the model mid-turn: “use the other file”",
    ]


def test_an_inbox_that_cannot_be_read_mid_turn_does_not_end_the_turn(
    tmp_path: Path, layout: Layout, caplog: pytest.LogCaptureFixture
) -> None:
    model = FakeModel([*SIX_CALLS[:2], [text("Done.")]])
    session = Session(SessionOptions(cwd=tmp_path), model, layout=layout)

    def unreadable() -> list[Block]:
        raise OSError(5, "Input/output error")

    session.agent.steer = unreadable
    with caplog.at_level(logging.WARNING, logger="agentteams"):
        result = session.run("go")
    assert (result.stop_reason, result.text, model.calls) == ("end_turn", "Done.", 3)
    assert caplog.text.count("could not take the messages that came mid-turn: [Errno 5]") == 2  # once per result
