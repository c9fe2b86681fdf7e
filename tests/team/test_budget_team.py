"""Budgets end to end (issue 15's acceptance): a lead and a real in-process teammate whose model answers report
usage cross 80 % and then 100 % of a 2 000-token budget; the lead warns once, asks it to shut down, it leaves,
and `agentteams status --json` (a real process) shows its tokens, cost and budget % meanwhile."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from agentteams.agent.session import Session, SessionOptions
from agentteams.model.types import Block, ModelRequest, Usage
from agentteams.store.api import Store
from agentteams.store.file.teams import TeamStore
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.team.lead.runtime import LeadRuntime
from agentteams.team.spawn.spawners import InProcessSpawner
from tests.support.cli import Cli
from tests.support.fake_model import FakeModel, last_user_text, text, tool
from tests.support.live_team import members, status_json
from tests.support.runtime import TEAM, WAIT, Events, quick_polls
from tests.support.wait import wait_until

SPENT = [900, 800, 500, 10]  # tokens per model answer: 45 %, 85 %, 110 % of 2 000, then the approval


class Teammate(FakeModel):
    """Two tool calls and a final answer, then it approves the shutdown request it was sent (its id echoed)."""

    def _script(self, n: int, request: ModelRequest) -> list[Block]:
        if n == 3:
            found = re.search(r'"requestId":\s*"([^"]+)"', last_user_text(request.messages))
            assert found, last_user_text(request.messages)
            approve = {"type": "shutdown_response", "request_id": found.group(1), "approve": True}
            return [tool("SendMessage", to=LEAD_NAME, message=approve)]
        return super()._script(n, request)


def busy(store: Store) -> bool:
    record = store.presence.read(TEAM, "alice")
    return record is not None and record.state == "working" and record.busy_since > 0


def budget_lines(events: Events) -> list[str]:
    with events._lock:
        return [e.text for e in events.items if e.kind == "budget" and e.agent == "alice"]


def test_a_teammate_crossing_80_then_100_percent_is_warned_once_then_shut_down(
    layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    quick_polls(monkeypatch)
    events, warned, release = Events(), threading.Event(), threading.Event()

    def hold(n: int) -> None:  # the 3rd answer waits for the warning; the 4th (the approval) for the test
        if n == 2:
            warned.wait(WAIT)
        if n == 3:
            release.wait(WAIT * 4)

    usage = lambda n: Usage(input_tokens=SPENT[min(n, 3)] - 100, output_tokens=100)  # noqa: E731
    mate = Teammate([[tool("TaskList")], [tool("TaskList")], [text("Done.")]], before_answer=hold, usage=usage,
                    default=text("Bye."))  # fmt: skip
    lead_model = FakeModel([], default=text("Noted."))
    session = Session(SessionOptions(cwd=tmp_path), lead_model, layout=layout)
    TeamStore(layout).create(TEAM, lead_session_id=session.options.session_id, cwd=str(tmp_path))
    session.ctx.team_name = TEAM
    spawner = InProcessSpawner(layout, mate, store=session.store)
    runtime = LeadRuntime(session, spawner, on_team_event=events)
    runtime.start()
    try:
        runtime.spawn_teammate({"name": "alice", "prompt": "Work.", "max_budget_tokens": 2000})
        wait_until(lambda: bool(budget_lines(events)), WAIT, "the 80 % warning")
        assert budget_lines(events) == ["Teammate alice has spent 85% of its budget (1700 of 2000 tokens)."]
        warned.set()
        wait_until(lambda: mate.calls >= 4, WAIT, "alice to be woken by the shutdown request")
        wait_until(lambda: busy(session.store), WAIT, "alice's record to say it is in a turn")
        alice = members(status_json(cli, TEAM))["alice"]  # held before its approval: still a member
        assert alice["input_tokens"] + alice["output_tokens"] == 2200 and alice["cost_usd"] > 0
        assert (alice["budget_tokens"], alice["budget_percent"]) == (2000, 110)
        assert alice["state"] == "working" and alice["busy_since"] > 0 and alice["context_percent"] is not None
        assert "shutdown_request" in last_user_text(mate.requests[3].messages)
        release.set()
        wait_until(lambda: "left" in events.kinds("alice"), WAIT, "alice to leave")
        assert [m.name for m in TeamStore(layout).read(TEAM).members] == [LEAD_NAME]
        assert len(budget_lines(events)) == 2  # the warning once, then the request
        assert "asked to shut down: You have used your whole budget (2200 of 2000 tokens)" in budget_lines(events)[1]
        assert any("alice has spent 85%" in lead_model.user_text(n) for n in range(lead_model.calls))
    finally:
        release.set()
        runtime.close()
    mate.assert_no_failures()
