"""The REPL's prompt comes up before its lead is composed (ui/lead_start.py): what the person does meanwhile waits
for the lead and is not lost, and a lead that cannot be composed ends the session with its error. In-process, the
prompt reading keys from a pipe."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from agentteams.errors import AgentTeamsError
from agentteams.store.paths import Layout
from agentteams.team.lead.runtime import LeadRuntime
from agentteams.ui.lead_start import Deferred, Lead
from agentteams.ui.questions import Questions
from agentteams.ui.render import Renderer, make_console
from agentteams.ui.repl import Repl
from agentteams.ui.team_view import TeamView
from tests.support.cli import Cli
from tests.support.fake_model import FakeModel, text
from tests.support.lead_pane import STEP, LeadPane
from tests.support.procs import child_env
from tests.support.runtime import WAIT, running_lead
from tests.support.tmuxlab import Tmux
from tests.support.wait import wait_until

SHIFT_TAB, CTRL_D = "\x1b[Z", "\x04"


@dataclass
class HeldLead:
    """A lead whose composing waits until the test lets it finish."""

    runtime: LeadRuntime
    asked: threading.Event = field(default_factory=threading.Event)  # composing has begun: the prompt is up
    release: threading.Event = field(default_factory=threading.Event)

    def build(self) -> Lead:
        self.asked.set()
        assert self.release.wait(WAIT), "the test never let the lead be composed"
        return self

    def close(self, *, team_down: bool = True, timeout: float = 20.0) -> None:
        """The rig closes the runtime."""


@dataclass
class Session:
    keys: PipeInput
    outcome: list[int | BaseException]
    thread: threading.Thread

    def finished(self) -> int | BaseException:
        self.thread.join(WAIT)
        assert not self.thread.is_alive() and self.outcome, "the REPL did not end"
        return self.outcome[0]


@contextmanager
def repl_session(build: Callable[[], Lead], tmp_path: Path) -> Iterator[Session]:
    """The REPL with a deferred lead, on a prompt reading from a pipe, in a thread of its own."""
    renderer = Renderer(make_console(False, io.StringIO()))
    repl = Repl(Deferred(build, "default"), renderer, Questions(lambda _q: None), TeamView(),
                history=tmp_path / "history", terminal=True)  # fmt: skip
    outcome: list[int | BaseException] = []
    with create_pipe_input() as keys:

        def run() -> None:
            with create_app_session(input=keys, output=DummyOutput()):
                try:
                    outcome.append(repl.run(None))
                except BaseException as e:  # the test looks at it
                    outcome.append(e)

        thread = threading.Thread(target=run, name="repl", daemon=True)
        thread.start()
        try:
            yield Session(keys, outcome, thread)
        finally:
            if thread.is_alive():
                keys.send_text(CTRL_D)
                thread.join(WAIT)


@pytest.fixture
def model() -> FakeModel:
    return FakeModel([], default=[text("OK")])


def test_a_line_entered_before_the_lead_is_composed_is_sent_once_it_is(
    tmp_path: Path, config_root: Path, model: FakeModel
) -> None:
    with running_lead(Layout(config_root), tmp_path, model) as rig:
        held = HeldLead(rig.runtime)
        with repl_session(held.build, tmp_path) as session:
            assert held.asked.wait(WAIT), "the lead was not composed once the prompt was up"
            session.keys.send_text(SHIFT_TAB + "hello\r")
            history = tmp_path / "history"
            wait_until(lambda: "+hello" in history.read_text(), WAIT, "the line entered (kept in the history)")
            assert model.calls == 0 and rig.runtime.session.policy.mode == "default"  # both wait for the lead
            held.release.set()
            wait_until(lambda: model.calls == 1, WAIT, "the early line sent to the model")
            assert model.user_text(0).endswith("hello")
            wait_until(lambda: rig.runtime.session.policy.mode == "acceptEdits", WAIT, "the early Shift-Tab applied")
            assert rig.runtime.wait_idle(WAIT)
            session.keys.send_text(CTRL_D)
            assert session.finished() == 0


def test_a_lead_that_cannot_be_composed_ends_the_session_with_its_error(tmp_path: Path) -> None:
    def broken() -> Lead:
        raise AgentTeamsError("--teammate-command starts processes")

    with repl_session(broken, tmp_path) as session:
        error = session.finished()  # no key pressed: the prompt ends on its own
    assert isinstance(error, AgentTeamsError) and "starts processes" in str(error)


def test_a_missing_key_ends_the_session_before_any_prompt(tmux: Tmux, cli: Cli, work: Path, config_root: Path) -> None:
    unset = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")
    env = {k: v for k, v in child_env(config_root).items() if k not in unset}
    pane = LeadPane(tmux, cli, {**env, "LANG": "C.UTF-8", "TERM": "xterm-256color"}, work, [])
    wait_until(lambda: pane.exit_status() is not None, STEP, "the lead to exit")
    screen = pane.screen()
    assert pane.exit_status() == 1 and "no Anthropic API key" in screen, screen
    assert not any(line.strip() == ">" for line in screen.splitlines()), screen  # checked first, as before
