"""Rewinding the conversation (Esc Esc at an empty prompt, as Claude Code): its prompts read back from the transcript;
going back to before one reads the conversation again up to that prompt's parent, the transcript goes on from there
(later entries stay in the file, off the chain), and the prompt's text is handed back to be edited."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentteams.agent.session import Session

BASH_INPUT = re.compile(r"<bash-input>(.*?)</bash-input>", re.S)
TAGGED = ("<system-reminder>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>")  # attached, not typed


@dataclass(frozen=True)
class Point:
    """A prompt of the conversation: its transcript entry, the entry before it (None: it was the first), and what
    the person sees of it."""

    uuid: str
    parent: str | None
    shown: str


def points(session: Session) -> list[Point]:
    """The prompts of the session's conversation as its transcript holds it now, oldest first."""
    from agentteams.store.transcripts.reader import load

    if not session.transcript.path.exists():
        return []
    found = []
    for entry in load(session.transcript.path).entries:
        if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary"):
            continue
        message = entry.get("message")
        shown = shown_text(message.get("content") if isinstance(message, dict) else None)
        parent = entry.get("parentUuid")
        if shown and isinstance(entry.get("uuid"), str):
            found.append(Point(entry["uuid"], parent if isinstance(parent, str) else None, shown))
    return found


def go_back(session: Session, point: Point) -> str:
    """The conversation back to before `point` (call between turns only); the prompt's text (a !command's as
    typed, `!` first)."""
    from agentteams.store.transcripts.reader import load

    if point.parent is None:
        session.agent.messages = []
        session.agent.context_tokens = session.agent.context_measured_at = 0
    else:
        session.adopt(load(session.transcript.path, point.parent))
    session.transcript.branch_from(point.parent)
    return point.shown


def shown_text(content: Any) -> str:
    """A prompt as the person typed it: its text (the last text block of an attached prompt), or `!command`; ""
    for a tool's result."""
    if isinstance(content, str):
        return content
    blocks = [b for b in content or [] if isinstance(b, dict)]
    if any(b.get("type") == "tool_result" for b in blocks):
        return ""
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    typed = [t for t in texts if not t.startswith(TAGGED)]
    if typed:
        return typed[-1]
    commands = [found.group(1) for t in texts if (found := BASH_INPUT.search(t)) is not None]
    return f"!{commands[-1]}" if commands else ""
