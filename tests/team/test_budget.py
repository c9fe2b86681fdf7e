"""Budgets (team/budget.py): the percentages, the spawn fields and the settings key, and the lead's watch over
its teammates' presence records: one warning at 80 %, one shutdown request at 100 %, a stop after the grace."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from agentteams.agent.loop import AgentEvent
from agentteams.settings.types import Settings
from agentteams.store.fs.atomic_json import epoch_ms, now_iso
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.store.presence import Presence
from agentteams.store.protocol import ShutdownApproved, ShutdownRequest, parse_message
from agentteams.team import budget as budget_module
from agentteams.team.budget import TeamBudgets, settings_budgets, spawn_budget
from agentteams.team.budget_limit import Budget
from agentteams.team.delivery import TeamEvent
from agentteams.team.heartbeat import OwnPresence
from agentteams.team.status_view import MemberView, PaneTable, TeamView, build_view
from agentteams.tools.base import ToolInputError
from agentteams.ui.dashboard import COLUMNS, member_cells
from agentteams.ui.render import Renderer, make_console
from tests.support.fake_model import FakeModel, text
from tests.support.runtime import TEAM, WAIT, Events, LeadRig, quick_polls, running_lead
from tests.support.wait import wait_until


def test_percent_is_the_larger_share_floored() -> None:
    assert Budget(2000).percent(1599, 0.0) == 79  # 79.95 %: not yet the warning
    assert Budget(2000).percent(1600, 0.0) == 80
    assert Budget(2000, 1.0).percent(100, 0.9) == 90  # dollars the larger share
    assert Budget().percent(10**9, 10.0) is None  # no limit, no percentage


def test_spawn_fields_win_over_the_settings_default_and_bad_figures_are_one_clear_line() -> None:
    settings = Settings(merged={"teamBudget": {"teammateMaxTokens": 5000, "teammateMaxUsd": 2}})
    assert spawn_budget({"max_budget_tokens": 2000}, settings) == Budget(2000, 2.0)
    assert spawn_budget({}, settings) == Budget(5000, 2.0)
    assert spawn_budget({"max_budget_usd": 0.5}, Settings()) == Budget(None, 0.5)
    for bad in ({"max_budget_tokens": 1.5}, {"max_budget_tokens": -1}, {"max_budget_usd": "lots"},
                {"max_budget_usd": True}):  # fmt: skip
        with pytest.raises(ToolInputError) as e:
            spawn_budget(bad, Settings())
        assert "\n" not in str(e.value) and ("max_budget_tokens" in str(e.value) or "max_budget_usd" in str(e.value))


def test_settings_key_and_a_bad_value_is_a_warning_not_a_failure(caplog: pytest.LogCaptureFixture) -> None:
    raw = {"teamBudget": {"maxTokens": 10000, "maxUsd": 3, "graceSeconds": 5, "teammateMaxUsd": 1}}
    assert settings_budgets(Settings(merged=raw)) == TeamBudgets(Budget(None, 1.0), Budget(10000, 3.0), 5.0)
    assert settings_budgets(Settings()) == TeamBudgets()
    assert settings_budgets(Settings(merged={"teamBudget": {"maxTokens": "many"}})) == TeamBudgets()
    assert "teamBudget.maxTokens must be a whole number greater than 0, not 'many'; budgets ignored" in caplog.text


def spend(rig: LeadRig, name: str, tokens: int, usd: float = 0.0) -> None:
    """What a teammate's runtime writes after each model answer: its spending so far."""
    record = Presence(os.getpid(), f"session-{name}", "in-process", state="working", input_tokens=tokens - tokens // 10,
                      output_tokens=tokens // 10, cost_usd=usd)  # fmt: skip
    rig.runtime.store.presence.write(TEAM, name, record)


def budget_lines(events: Events, name: str) -> list[str]:
    with events._lock:
        return [e.text for e in events.items if e.kind == "budget" and e.agent == name]


def shutdown_requests(rig: LeadRig, name: str) -> list[ShutdownRequest]:
    found = [parse_message(e.text) for e in rig.mailbox.read_all(TEAM, name)]
    return [m for m in found if isinstance(m, ShutdownRequest)]


def test_warning_once_at_80_then_one_shutdown_request_at_100_and_an_approval_removes_it(
    layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quick_polls(monkeypatch)
    events = Events()
    model = FakeModel([], default=text("Noted."))
    with running_lead(layout, tmp_path, model, events=events) as rig:
        rig.runtime.spawn_teammate({"name": "alice", "prompt": "Work.", "max_budget_tokens": 2000})
        spend(rig, "alice", 1000)
        spend(rig, "alice", 1700)
        wait_until(lambda: bool(budget_lines(events, "alice")), WAIT, "the 80 % warning")
        spend(rig, "alice", 1900)  # still over 80 %, under 100 %: no second warning, no request
        rig.settle()
        assert budget_lines(events, "alice") == ["Teammate alice has spent 85% of its budget (1700 of 2000 tokens)."]
        assert not shutdown_requests(rig, "alice")
        assert any("alice has spent 85% of its budget" in model.user_text(n) for n in range(model.calls))
        view = build_view(rig.runtime.store, rig.teams.read(TEAM), PaneTable(None))
        alice = next(m for m in view.members if m.name == "alice")
        assert (alice.budget_tokens, alice.budget_percent) == (2000, 95)
        spend(rig, "alice", 2050)
        wait_until(lambda: len(budget_lines(events, "alice")) >= 2, WAIT, "the shutdown request at 100 %")
        rig.settle()
        [request] = shutdown_requests(rig, "alice")
        assert "whole budget (2050 of 2000 tokens)" in (request.reason or "")
        assert len(budget_lines(events, "alice")) == 2, events.items  # the warning, then "asked to shut down"
        approved = ShutdownApproved(request_id=request.request_id, sender="alice", timestamp=now_iso())
        rig.mailbox.send(TEAM, LEAD_NAME, approved.to_text(), sender="alice")
        wait_until(lambda: "left" in events.kinds("alice"), WAIT, "alice to leave")
        assert "alice" not in rig.members() and "died" not in events.kinds("alice")


def test_a_teammate_that_does_not_comply_is_stopped_after_the_grace_like_a_dead_one(
    layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quick_polls(monkeypatch)
    monkeypatch.setattr(budget_module, "DEFAULT_GRACE", 0.3)
    events = Events()
    with running_lead(layout, tmp_path, FakeModel([], default=text("Noted.")), events=events) as rig:
        rig.runtime.spawn_teammate({"name": "bob", "prompt": "Work.", "max_budget_usd": 0.01})
        task = rig.tasks.create(TEAM, "Build it", "")
        rig.tasks.update(TEAM, task.id, owner="bob", status="in_progress")
        spend(rig, "bob", 10, usd=0.02)  # past its dollars at once: the warning and the request together
        wait_until(lambda: bool(shutdown_requests(rig, "bob")), WAIT, "the shutdown request")
        wait_until(lambda: "died" in events.kinds("bob"), WAIT, "bob to be stopped after the grace")
        assert rig.spawner.stopped == ["bob"] and "bob" not in rig.members()
        assert rig.tasks.get(TEAM, task.id).owner is None  # its task went back, as a dead teammate's does
        assert budget_lines(events, "bob")[0] == "Teammate bob has spent 200% of its budget ($0.0200 of $0.01)."


def test_the_team_budget_sums_every_member_and_stops_them_all(
    layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quick_polls(monkeypatch)
    events = Events()
    settings = Settings(merged={"teamBudget": {"maxTokens": 3000}})
    monkeypatch.setattr(budget_module, "settings_budgets", lambda _s, real=settings_budgets: real(settings))
    with running_lead(layout, tmp_path, FakeModel([], default=text("Noted.")), "alice", "bob", events=events) as rig:
        spend(rig, "alice", 1300)
        spend(rig, "bob", 1200)  # 2500 of 3000: 83 % of the team's
        wait_until(lambda: bool(budget_lines(events, "team")), WAIT, "the team's warning")
        assert not shutdown_requests(rig, "alice") and not shutdown_requests(rig, "bob")
        spend(rig, "bob", 1800)
        wait_until(lambda: bool(shutdown_requests(rig, "alice") and shutdown_requests(rig, "bob")), WAIT, "both asked")
        assert budget_lines(events, "team") == ["The team has spent 83% of its budget (2500 of 3000 tokens)."]


def test_the_repl_line_and_the_status_columns_show_budget_busy_since_and_tool() -> None:
    out = io.StringIO()
    renderer = Renderer(make_console(False))
    renderer.console.file = out
    renderer.team_event(
        TeamEvent("budget", "alice", "Teammate alice has spent 85% of its budget (1700 of 2000 tokens).")
    )
    assert out.getvalue() == "$ Teammate alice has spent 85% of its budget (1700 of 2000 tokens).\n"
    alice = MemberView("alice", "alice@proj", None, "teammate", "in-process", None, "working", False,
                       input_tokens=2000, output_tokens=200, cost_usd=0.01, busy_since=epoch_ms() - 65_000,
                       current_tool="Bash", budget_percent=110)  # fmt: skip
    view = TeamView(TEAM, None, LEAD_NAME, False, [alice], [])
    cells = dict(zip(COLUMNS, member_cells(view, alice), strict=True))
    assert (cells["state"], cells["tool"], cells["budget"]) == ("working 1m05s", "Bash", "110%")
    assert cells["usage"] == "2000/200 $0.0100"


def test_an_agents_record_says_since_when_it_is_busy_and_which_tool_runs() -> None:
    written: list[tuple[str, int, str | None]] = []
    own = OwnPresence(lambda r: written.append((r.state, r.busy_since, r.current_tool)), Presence(1, "s", "tmux"))
    own.write(state="working")
    own.saw(AgentEvent("tool_start", tool="Bash"))
    own.write()  # e.g. after a model answer: still the same turn
    own.saw(AgentEvent("tool_end", tool="Bash"))
    own.write(state="idle")
    (s1, since, t1), (s2, same, t2), (s3, cleared, t3) = written
    assert (s1, t1, s2, t2, s3, t3) == ("working", None, "working", "Bash", "idle", None)
    assert since > 0 and same == since and cleared == 0


def test_a_pane_id_learnt_after_the_first_write_is_written_at_once() -> None:
    written: list[str] = []
    own = OwnPresence(lambda r: written.append(r.pane_id), Presence(1, "s", "tmux"))
    own.update(pane_id="%1")  # not written yet: it goes with the first write, not alone
    assert written == []
    own.write(state="working")
    own.update(pane_id="%2")  # a teammate started before its pane: the pane attached mid-turn
    assert written == ["%1", "%2"]
    own.write(state="exited")
    own.update(pane_id="%3")  # gone: nothing more is written
    assert written == ["%1", "%2", "%2"]
