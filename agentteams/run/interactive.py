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
    from agentteams.ui.commands import TeamView
    from agentteams.ui.questions import Question, Questions, yes_no
    from agentteams.ui.render import Renderer, describe_input, make_console
    from agentteams.ui.repl import Repl
    from agentteams.ui.terminal import LoopWriter

    model = resolve_model(options.model)  # an unknown alias fails before anything starts
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    writer = LoopWriter(sys.stdout) if terminal else None
    renderer = Renderer(make_console(terminal, writer), hold_partial=terminal)

    def show_question(question: Question) -> None:
        renderer.question(question.text)
        renderer.on_change()

    questions = Questions(show_question)
    view = TeamView()
    answers: dict[str, Answer] = {"allow": "allow", "always": "always", "deny": "deny"}

    def ask(request: PermissionAsk) -> Answer:
        why = f" ({request.reason})" if request.reason else ""
        text = f"The lead wants to run {request.tool}({describe_input(request.input)}){why}."
        return answers.get(questions.ask(yes_no(text, always=True)), "deny")

    def judge(request: PermissionRequest, member: str) -> bool:
        what = f"{request.tool_name}({describe_input(request.input)})"
        about = f" — {request.description}" if request.description else ""
        text = f"Teammate {member} asks to run {what}{about}."
        return questions.ask(yes_no(text, always=False)) == "allow"

    def on_team_event(event: TeamEvent) -> None:
        view.update(event)
        renderer.team_event(event)

    parts = build_lead(
        options, teammate_mode=teammate_mode, teammate_command=teammate_command, on_event=renderer.agent_event,
        on_team_event=on_team_event, ask=ask, judge=judge, on_turn_end=renderer.turn_end, seed=seed,
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
