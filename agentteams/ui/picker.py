"""The session picker's text: recent sessions as numbered lines, and which one an answer names."""

from __future__ import annotations

from agentteams.inert_text import inert
from agentteams.store.transcripts.reader import SessionInfo


def listing(found: list[SessionInfo]) -> list[str]:
    """The picker's lines: number, age, the session's name (-n) if it has one, first prompt, id."""
    return [f"{i:>3}. {s.age():>8}  {f'{inert(s.title)} · ' if s.title else ''}{s.first_prompt or '(no prompt)'}  "
            f"[{s.session_id}]" for i, s in enumerate(found, 1)]  # fmt: skip


def choice(answer: str, found: list[SessionInfo]) -> SessionInfo | None:
    """A picker answer: a number from the list or a session id (or its start); None for anything else."""
    answer = answer.strip()
    if answer.isdigit() and 1 <= int(answer) <= len(found):
        return found[int(answer) - 1]
    hits = [s for s in found if answer and s.session_id.startswith(answer)]
    return hits[0] if len(hits) == 1 else None
