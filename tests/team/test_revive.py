"""A teammate that died while its lead ran is kept aside (`agentteamsDeparted` in the config) and comes back with
its own conversation through the Task tool's `resume`, as it was: its agent id, colour, model, mode and session."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.store.file.teams import TeamStore
from agentteams.store.paths import LEAD_NAME, Layout
from agentteams.team.lead.restarts import HINT
from agentteams.tools.base import ToolInputError
from tests.support.fake_model import FakeModel, text
from tests.support.runtime import TEAM, WAIT, quick_polls, running_lead
from tests.support.wait import wait_until


def test_a_dead_teammate_comes_back_with_its_conversation(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    quick_polls(monkeypatch)
    teams = TeamStore(layout)
    model = FakeModel([[text("noted")]] * 3)
    with running_lead(layout, tmp_path, model, "bob") as rig:
        teams.set_member_fields(TEAM, "bob", session_id="bob-session", mode="acceptEdits")
        before = teams.read(TEAM).member("bob")
        assert before is not None
        rig.spawner.kill("bob")
        wait_until(lambda: "bob" not in rig.members(), WAIT, "the lead to see bob die")
        config = teams.read(TEAM)
        assert [m.name for m in config.departed or []] == ["bob"]
        wait_until(lambda: len(model.requests) >= 1, WAIT, "the lead's model to hear of it")
        assert HINT in str(model.requests[0]), "the lead's model was not told how to bring bob back"

        result = rig.runtime.spawn_teammate({"name": "bob", "team_name": TEAM, "resume": True, "prompt": "Go on."})
        assert "bob is back" in result
        back = rig.spawner.spawned[-1]
        assert (back.name, back.resume, back.permission_mode) == ("bob", "bob-session", "acceptEdits")
        assert back.lead_key is not None, "a resumed teammate is keyed like a new one"
        config = teams.read(TEAM)
        member = config.member("bob")
        assert member is not None and not config.departed
        assert (member.agent_id, member.color, member.session_id) == (before.agent_id, before.color, "bob-session")
        [prompt] = [e for e in rig.mailbox.read_live(TEAM, "bob") if e.text == "Go on."]
        assert prompt.sender == LEAD_NAME and "bob" in rig.runtime.members()

        again = rig.runtime.spawn_teammate({"name": "bob", "team_name": TEAM, "resume": True, "prompt": ""})
        assert "nothing to resume" in again and len([r for r in rig.spawner.spawned if r.name == "bob"]) == 2
        with pytest.raises(ToolInputError, match="No teammate named carol died"):
            rig.runtime.spawn_teammate({"name": "carol", "team_name": TEAM, "resume": True, "prompt": "x"})


def test_the_departed_keep_the_latest_sixteen(layout: Layout, tmp_path: Path) -> None:
    from agentteams.store.api import NewMember
    from agentteams.store.records import MAX_DEPARTED

    teams = TeamStore(layout)
    teams.create(TEAM, cwd=str(tmp_path))
    for i in range(MAX_DEPARTED + 2):
        teams.add_member(TEAM, NewMember(name=f"w{i}"))
        assert teams.depart_member(TEAM, f"w{i}") is not None
    departed = teams.read(TEAM).departed or []
    assert [m.name for m in departed] == [f"w{i}" for i in range(2, MAX_DEPARTED + 2)]
    assert teams.depart_member(TEAM, "nobody") is None
    teams.add_member(TEAM, NewMember(name="w5"))  # a new member took the name: the old one stays departed
    assert teams.return_member(TEAM, "w5") is None
