"""What `-c`/`-r` show before the prompt, as claude shows a resumed conversation: which session goes on, then its
recent turns (prompts, `!commands`, answers, tool calls), so the person sees where they left off."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentteams.ui.render import Renderer

if TYPE_CHECKING:
    from agentteams.agent.session import Session

SHOWN_PROMPTS = 10  # the conversation's last prompts shown, with what followed each
ANSWER_LINES = 6  # of an answer's text


def show(renderer: Renderer, session: Session) -> None:
    """The resumed conversation's name and its recent turns, above the prompt."""
    from agentteams.agent.rewind import shown_text

    messages = session.agent.messages
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user" and shown_text(m.get("content"))]
    recent = messages[starts[-SHOWN_PROMPTS] if len(starts) > SHOWN_PROMPTS else 0 :]
    title = shown_text(messages[starts[0]]["content"]).strip().splitlines()[0][:80] if starts else ""
    left_out = max(len(starts) - SHOWN_PROMPTS, 0)
    about = f" · {title}" if title else ""
    renderer.hint(f"Resumed session {session.options.session_id}{about}")
    if left_out:
        renderer.hint(f"… {left_out} earlier prompt{'' if left_out == 1 else 's'} not shown")
    for message in recent:
        for line, style in _lines(message):
            renderer.notice(line, style=style)


def _lines(message: dict[str, Any]) -> list[tuple[str, str]]:
    from agentteams.agent.rewind import shown_text
    from agentteams.agent.turn_types import tool_input_summary

    content = message.get("content")
    if message.get("role") == "user":
        typed = shown_text(content)
        return [("> " + typed.replace("\n", "\n  "), "bold")] if typed else []
    out = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            lines = str(block["text"]).strip().splitlines()
            more = [f"… +{len(lines) - ANSWER_LINES} lines"] if len(lines) > ANSWER_LINES else []
            out.append(("⏺ " + "\n  ".join([*lines[:ANSWER_LINES], *more]), ""))
        elif block.get("type") == "tool_use":
            given = block.get("input")
            args: dict[str, Any] = given if isinstance(given, dict) else {}
            out.append((f"⏺ {block.get('name')}({tool_input_summary(args, limit=80)})", "dim"))
    return out
