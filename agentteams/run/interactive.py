"""`agentteams [PROMPT]` without -p: the interactive lead, composed from the lead runtime and the ui package.

prompt_toolkit and rich are imported only here, inside `run`, so `--help` and teammates never pay for them.
"""

from __future__ import annotations

import sys
from typing import Any


def run(prompt: str | None, options: Any, *, teammate_mode: str, teammate_command: str | None, seed: Any = None) -> int:
    """Talk to the lead until the person leaves; the exit code."""
    from agentteams import __version__, diagnostics
    from agentteams.agent.loop import Answer, PermissionAsk
    from agentteams.model.aliases import resolve_model
    from agentteams.run.lead_setup import build_lead
    from agentteams.store.paths import Layout
    from agentteams.store.protocol import PermissionRequest
    from agentteams.team.delivery import TeamEvent
    from agentteams.team.lead.permission_relay import Verdict
    from agentteams.ui.commands import TeamView
    from agentteams.ui.permission_prompt import shown
    from agentteams.ui.questions import Question, Questions, permission_question
    from agentteams.ui.render import Renderer, make_console
    from agentteams.ui.repl import Repl
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

    def ask(request: PermissionAsk) -> Answer:
        what = shown("The lead", request.tool, request.input, request.reason, options.cwd)
        question = permission_question(what.text, what.always, detail=what.detail, detail_syntax=what.syntax)
        answer = questions.ask(question)
        request.feedback = question.feedback
        if answer == "always":
            return "accept_edits" if what.accept_edits else "always"
        return "allow" if answer == "allow" else "deny"

    def judge(request: PermissionRequest, member: str) -> Verdict:
        what = shown(f"Teammate {member}", request.tool_name, request.input, request.description or "", options.cwd)
        always = "and don't ask again for the same from this teammate in this session"
        question = permission_question(what.text, always, detail=what.detail, detail_syntax=what.syntax)
        answer = questions.ask(question)
        return "always" if answer == "always" else "allow" if answer == "allow" else "deny"

    def on_team_event(event: TeamEvent) -> None:
        view.update(event)
        renderer.team_event(event)

    parts = build_lead(
        options, teammate_mode=teammate_mode, teammate_command=teammate_command, on_event=renderer.agent_event,
        on_team_event=on_team_event, ask=ask, judge=judge, on_turn_end=renderer.turn_end, seed=seed,
        warm=prompt is None,  # the person types the first prompt: the HTTP stack loads meanwhile
    )  # fmt: skip
    prompt = seed.first_prompt(prompt) if seed is not None else prompt  # a team file's (cli/commands/launch.py)
    diagnostics.set_sink(renderer.warning)  # warnings print above the input line, never through the raw stream
    banner = f"agentteams {__version__} · {model} · {options.cwd} · /help for commands, Ctrl-D to leave"
    history = Layout.from_env().root / "agentteams" / "history"
    repl = Repl(parts, renderer, questions, view, history=history, terminal=terminal, banner=banner, writer=writer)
    try:
        return repl.run(prompt)
    finally:
        if not repl.closed:  # a bug of ours ended the loop: still leave no teammate behind
            parts.close(team_down=True)
