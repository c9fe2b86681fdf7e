"""/output-style in the REPL, as Claude Code 2.1.332's (seen in tmux against the scripted server): the styles listed
with the one in use, a switch by name in any case saved in the project's local settings, an unknown name refused;
before the first request the system prompt takes the style, after it the next prompt carries the change."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.agent.prompts import INTRO, STYLED_INTRO
from agentteams.store.paths import Layout
from agentteams.ui.commands import CommandContext, run_command
from agentteams.ui.render import Renderer, make_console
from agentteams.ui.team_view import TeamView
from tests.support.fake_model import FakeModel, text
from tests.support.runtime import WAIT, LeadRig, quick_polls, running_lead


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_polls(monkeypatch)


class Repl:
    def __init__(self, rig: LeadRig) -> None:
        self.rig = rig
        self.out = io.StringIO()
        self.ctx = CommandContext(rig.runtime, TeamView(), Renderer(make_console(False, self.out)))

    def line(self, line: str) -> str:
        start = len(self.out.getvalue())
        if run_command(line, self.ctx) == "submit":
            self.rig.runtime.submit(line)
        assert self.rig.runtime.wait_idle(WAIT)
        return self.out.getvalue()[start:]


@pytest.fixture
def repl(tmp_path: Path, layout: Layout) -> Iterator[Repl]:
    style = tmp_path / ".claude" / "output-styles" / "pirate.md"
    style.parent.mkdir(parents=True)
    style.write_text("---\nname: Pirate\ndescription: talk like a pirate\n---\nARR\n", encoding="utf-8")
    with running_lead(layout, tmp_path, FakeModel([], default=[text("OK")])) as rig:
        yield Repl(rig)


def local_settings(repl: Repl) -> dict[str, object]:
    path = repl.rig.runtime.session.options.cwd / ".claude" / "settings.local.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_the_styles_are_listed_and_one_is_chosen_by_name(repl: Repl) -> None:
    shown = repl.line("/output-style")
    assert "Output style in use: default" in shown and "- default (in use)" in shown
    for line in ("- Proactive: ", "- Concise: ", "- Explanatory: ", "- Learning: ", "- Pirate: talk like a pirate"):
        assert line in shown, shown
    assert 'no output style "nosuch"' in repl.line("/output-style nosuch")
    assert "Output style now Pirate" in repl.line("/output-style pirate")  # any case, as claude's
    assert local_settings(repl)["outputStyle"] == "Pirate"
    assert "The output style is Pirate already" in repl.line("/output-style Pirate")
    assert "- Pirate (in use): talk like a pirate" in repl.line("/output-style")
    assert repl.rig.model.calls == 0  # none of it is a request


def test_before_the_first_request_the_system_prompt_takes_it_after_it_the_next_prompt(repl: Repl) -> None:
    repl.line("/output-style Pirate")
    repl.line("first")
    first = repl.rig.model.requests[-1]
    assert first.system.startswith(STYLED_INTRO) and first.system.endswith(
        "# Output Style: Pirate\nARR\n\nPirate output style is active: answer in the way its section above describes."
    )
    repl.line("/output-style default")
    assert local_settings(repl)["outputStyle"] == "default"
    repl.line("second")
    second = repl.rig.model.requests[-1]
    assert second.system == first.system  # the cached prefix holds
    assert "The output style is back to the default" in repl.rig.model.user_text(1)
    repl.line("/output-style Concise")
    repl.line("third")
    assert repl.rig.model.requests[-1].system == first.system
    assert "# Output Style: Concise\n" in repl.rig.model.user_text(2)
    assert "The output style is back" not in repl.rig.model.user_text(2)  # each change told once
    assert not first.system.startswith(INTRO)
