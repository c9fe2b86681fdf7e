"""Esc Esc's rewind, at the prompt: the prompts of this session listed oldest first, a number picks the one to go
back to before (the conversation then ends where it did before that prompt, and its text is put back on the input
line to edit and send again), Enter or Esc leaves it all as it was."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentteams.errors import AgentTeamsError
from agentteams.ui.render import Renderer

if TYPE_CHECKING:
    from agentteams.agent.rewind import Point
    from agentteams.team.lead.runtime import LeadRuntime

SHOWN = 20  # the newest prompts listed
WIDTH = 100  # characters of a prompt shown on its line


async def choose(points: list[Point], renderer: Renderer) -> Point | None:
    """The prompt picked, None when the person left the list (or there is nothing to go back to)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    if not points:
        renderer.hint("Nothing to rewind to yet: no prompt of this session.")
        return None
    listed = points[-SHOWN:]
    lines = ["Rewind: go back to before which prompt? The conversation goes back; files are left as they are."]
    for n, point in enumerate(listed, 1):
        first = point.shown.strip().splitlines()[0] if point.shown.strip() else ""
        more = "…" if len(first) > WIDTH or "\n" in point.shown.strip() else ""
        lines.append(f"  {n}. {first[:WIDTH]}{more}")
    renderer.notice("\n".join(lines))
    renderer.flush()
    keys = KeyBindings()

    @keys.add("escape", eager=True)
    def _leave(event: KeyPressEvent) -> None:
        event.app.exit(result="")

    picker: PromptSession[str] = PromptSession(key_bindings=keys)
    try:
        answer = (await picker.prompt_async(f"Number (1-{len(listed)}), Enter to cancel: ")).strip()
    except (KeyboardInterrupt, EOFError):
        answer = ""
    if not answer:
        return None
    if not answer.isdigit() or not 1 <= int(answer) <= len(listed):
        renderer.hint(f"No prompt {answer!r} in the list: nothing rewound.")
        return None
    return listed[int(answer) - 1]


def go_back(point: Point, runtime: LeadRuntime, renderer: Renderer) -> str:
    """Rewind to before `point` (between turns only); the prompt's text, or "" when it could not be done."""
    from agentteams.agent.rewind import go_back as rewind

    try:
        text = runtime.between_turns("rewind", lambda: rewind(runtime.session, point))
    except AgentTeamsError as e:
        renderer.warning("error", str(e))
        return ""
    renderer.hint("Rewound: the conversation is back to before that prompt, which is on the input line to edit.")
    return text
