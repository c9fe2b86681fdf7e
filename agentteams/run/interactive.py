"""`agentteams [PROMPT]` without -p: the interactive lead, composed from the lead runtime and the ui package.

prompt_toolkit and rich are imported only here, inside `run`, so `--help` and teammates never pay for them. When the
person types the first prompt, it is drawn first and the lead composed behind it (ui/lead_start.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentteams.agent.loop import AgentEvent, Answer, PermissionAsk
    from agentteams.model.config import ModelConfig
    from agentteams.run.lead_setup import LeadParts
    from agentteams.store.protocol import PermissionRequest
    from agentteams.team.delivery import TeamEvent
    from agentteams.team.lead.permission_relay import Verdict
    from agentteams.ui.questions import Questions


def run(prompt: str | None, options: Any, *, teammate_mode: str, teammate_command: str | None, seed: Any = None) -> int:
    """Talk to the lead until the person leaves; the exit code."""
    from agentteams import __version__, diagnostics
    from agentteams.model.aliases import resolve_model
    from agentteams.store.paths import Layout
    from agentteams.ui.lead_start import Deferred
    from agentteams.ui.questions import Question, Questions, held_message_question
    from agentteams.ui.render import Renderer, make_console
    from agentteams.ui.repl import Repl
    from agentteams.ui.team_view import TeamView
    from agentteams.ui.terminal import LoopWriter

    model = resolve_model(options.model)  # an unknown alias fails before anything starts
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    writer = LoopWriter(sys.stdout) if terminal else None
    renderer = Renderer(make_console(terminal, writer), hold_partial=terminal)

    def show_question(question: Question) -> None:
        renderer.question(question.text, question.detail, question.detail_syntax)
        renderer.on_change()

    questions = Questions(show_question)
    view = TeamView()
    composed: list[LeadParts] = []  # the lead once composed: whether it leads a team decides how a question reads
    ask, judge = permission_askers(questions, options.cwd, lambda: bool(composed and composed[0].runtime.team))

    def on_team_event(event: TeamEvent) -> None:
        view.update(event)
        renderer.team_event(event)

    on_event, on_turn_end, on_end = reported(renderer.agent_event, renderer.turn_end)

    # the person types the first prompt into a terminal: it is drawn at once, the lead composed while they type
    # (from the prompt's first drawing on); a prompt given, a team file or a resumed session want the lead first
    deferred = terminal and prompt is None and seed is None and options.resume is None
    config = model_config(options) if deferred else None  # still the first thing checked: a missing key, say

    def compose() -> LeadParts:
        from agentteams.run.lead_setup import build_lead

        parts = build_lead(
            options, teammate_mode=teammate_mode, teammate_command=teammate_command, on_event=on_event,
            on_team_event=on_team_event, ask=ask, judge=judge, on_turn_end=on_turn_end, seed=seed,
            warm=prompt is None, config=config,  # the person types the first prompt: the HTTP stack loads meanwhile
            ask_held=lambda text, message: questions.ask(held_message_question(text, message)) == "deliver",
        )  # fmt: skip
        from agentteams.agent.subagent_run import Background

        # Task calls in the background, as claude 2.1.332's: a report comes back to the lead as a notice
        Background(parts.runtime.session, lambda finished: parts.runtime.hear(finished.notice()))
        composed.append(parts)
        return parts

    lead = Deferred(compose, options.permission_mode) if deferred else compose()
    prompt = seed.first_prompt(prompt) if seed is not None else prompt  # a team file's (cli/commands/launch.py)
    diagnostics.set_sink(renderer.warning)  # warnings print above the input line, never through the raw stream
    banner = f"agentteams {__version__} · {model} · {options.cwd} · /help for commands, Ctrl-D to leave"
    history = Layout.from_env().root / "agentteams" / "history"
    repl = Repl(lead, renderer, questions, view, history=history, terminal=terminal, banner=banner, writer=writer,
                name=options.name)  # fmt: skip
    try:
        return repl.run(prompt)
    finally:
        on_end()
        built = repl.built()
        if not repl.closed and built is not None:  # a bug of ours ended the loop: still leave no teammate behind
            built.close(team_down=True)


def reported(on_event: Callable[[AgentEvent], None], on_turn_end: Callable[[Any], None]) -> tuple[
    Callable[[AgentEvent], None], Callable[[Any], None], Callable[[], None]
]:  # fmt: skip
    """The renderer's callbacks, in a background session also keeping its job record's state (run/background.py);
    and what to call at the session's end."""
    import os

    if not os.environ.get("AGENTTEAMS_BG_JOB"):  # run.background.JOB_VAR; its module loads only in such a session
        return on_event, on_turn_end, lambda: None
    from agentteams.run.background import JobReporter

    reporter = JobReporter.from_env()
    assert reporter is not None
    from agentteams.procs.term_signal import leave_on_sigterm

    # `agentteams stop` ends a background session with SIGTERM: leave as Ctrl-D does, the team taken down (run's
    # finally), rather than die with teammates left waiting for a lead that never comes back
    leave_on_sigterm()

    def event(e: AgentEvent) -> None:
        if e.kind == "user":
            reporter.set("working")
        on_event(e)

    def turn_end(result: Any) -> None:
        on_turn_end(result)
        reporter.set("idle")

    return event, turn_end, reporter.ended


def model_config(options: Any) -> ModelConfig:
    """The model's configuration, its key checked (a key helper run): before the prompt, as before the lead."""
    from agentteams.model.config import ModelConfig
    from agentteams.settings.keyhelper import credentials_env

    return ModelConfig.from_env(credentials_env(options.settings.api_key_helper, options.cwd))


def permission_askers(
    questions: Questions, cwd: Path, leads_team: Callable[[], bool] = lambda: True
) -> tuple[Callable[[PermissionAsk], Answer], Callable[[PermissionRequest, str], Verdict]]:
    """How the lead's own permission asks, and its teammates', become questions at the prompt (what they show loads
    with the first ask); a session leading no team asks in its own voice, as claude does, not as "The lead"."""
    from agentteams.ui.questions import permission_question

    def ask(request: PermissionAsk) -> Answer:
        from agentteams.ui.permission_prompt import shown

        what = shown("The lead" if leads_team() else None, request.tool, request.input, request.reason, cwd)
        question = permission_question(what.text, what.always, detail=what.detail, detail_syntax=what.syntax)
        answer = questions.ask(question)
        request.feedback = question.feedback
        if answer == "always":
            return "accept_edits" if what.accept_edits else "always"
        return "allow" if answer == "allow" else "deny"

    def judge(request: PermissionRequest, member: str) -> Verdict:
        from agentteams.ui.permission_prompt import shown

        what = shown(f"Teammate {member}", request.tool_name, request.input, request.description or "", cwd)
        always = "and don't ask again for the same from this teammate in this session"
        question = permission_question(what.text, always, detail=what.detail, detail_syntax=what.syntax)
        answer = questions.ask(question)
        return "always" if answer == "always" else "allow" if answer == "allow" else "deny"

    return ask, judge
