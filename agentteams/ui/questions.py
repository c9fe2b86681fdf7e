"""Questions for the person asked from background threads (permission asks) and answered at the input line.

A thread that asks blocks until the input loop hands the answer back; once the REPL closes, every
question pending or new gets its safe answer (deny) at once, so no thread waits forever.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

YES = ("y", "yes")
NO = ("n", "no")
ALWAYS = ("a", "always")
# a permission question's three choices, as Claude Code offers them: yes / yes and don't ask again / no (and what
# to do instead, typed after the choice: `3 use the other file`)
CHOICE_KEYS = {"allow": ("1", *YES), "always": ("2", *ALWAYS), "deny": ("3", *NO)}


@dataclass
class Question:
    text: str  # printed once, when the question becomes the current one
    prompt: str  # the input line's prompt while it waits, e.g. "allow? [y/n/a] "
    choices: dict[str, str]  # what the person may type (lowercased) -> the answer
    fallback: str  # the answer when nobody can answer (the REPL is closing, the turn was interrupted)
    detail: str = ""  # what is asked about, shown under the text: a file's content, a diff, a command
    detail_syntax: str | None = None  # how to colour `detail` ("diff", "bash", a file's language), or plain
    answer: str | None = None
    feedback: str = ""  # typed after a "no": what to do instead, passed on to the model
    done: threading.Event = field(default_factory=threading.Event)

    def settle(self, answer: str) -> None:
        self.answer = answer
        self.done.set()


def permission_question(text: str, always: str, *, detail: str = "", detail_syntax: str | None = None) -> Question:
    """Claude Code's three choices: 1 yes, 2 yes and `always` (what "don't ask again" means for this call), 3 no."""
    choices = {key: answer for answer, keys in CHOICE_KEYS.items() for key in keys}
    prompt = f"1 yes · 2 yes, {always} · 3 no (add what to do instead) > "
    return Question(text, prompt, choices, fallback="deny", detail=detail, detail_syntax=detail_syntax)


def held_message_question(text: str, message: str) -> Question:
    """Claude's dialog for a message another session sent that the inbound policy held: deny (the default) or
    deliver."""
    choices = {"1": "deny", "n": "deny", "no": "deny", "deny": "deny", "2": "deliver", "d": "deliver",
               "deliver": "deliver"}  # fmt: skip
    prompt = "1 deny — drop it and tell the sender it was declined · 2 deliver this message to the model > "
    return Question(text, prompt, choices, fallback="deny", detail=message)


class Questions:
    """The queue of open questions; the oldest is the current one, answered by the next line entered."""

    def __init__(self, on_current: Callable[[Question], None]) -> None:
        self._on_current = on_current  # shows a question when it reaches the front
        self._lock = threading.Lock()
        self._open: list[Question] = []
        self._closed = False

    def ask(self, question: Question) -> str:
        """Block until the person answers (called from any thread but the input loop's); a question the lead asks
        for a teammate ends with its fallback once withdrawn (the teammate is gone: team/lead/ask_scope.py)."""
        from agentteams.team.lead import ask_scope

        with self._lock:
            if self._closed:
                return question.fallback
            self._open.append(question)
            first = len(self._open) == 1
        if first:
            self._on_current(question)
        if (scope := ask_scope.current()) is not None:
            scope.on_withdraw(lambda: self._withdraw(question))
        question.done.wait()
        return question.answer or question.fallback

    def _withdraw(self, question: Question) -> None:
        """Take an unanswered question back: the next one, if any, becomes current."""
        with self._lock:
            index = next((i for i, q in enumerate(self._open) if q is question), None)  # by identity: equal texts
            if index is None:
                return
            del self._open[index]
            following = self._open[0] if index == 0 and self._open else None
        question.settle(question.fallback)
        if following is not None:
            self._on_current(following)

    def current(self) -> Question | None:
        with self._lock:
            return self._open[0] if self._open else None

    def answer(self, text: str) -> bool:
        """Answer the current question with a typed line; False when the line is not one of its choices."""
        with self._lock:
            if not self._open:
                return False
            question = self._open[0]
            first, _, rest = text.strip().partition(" ")
            answer = question.choices.get(first.lower()) or question.choices.get(text.strip().lower())
            if answer is None:
                return False
            question.feedback = rest.strip() if answer == "deny" and first.lower() in question.choices else ""
            self._open.pop(0)
            following = self._open[0] if self._open else None
        question.settle(answer)
        if following is not None:
            self._on_current(following)
        return True

    def cancel_all(self) -> int:
        """Give every open question its fallback answer; how many there were."""
        with self._lock:
            pending, self._open = self._open, []
        for q in pending:
            q.settle(q.fallback)
        return len(pending)

    def close(self) -> None:
        """From now on every question is answered with its fallback at once."""
        with self._lock:
            self._closed = True
        self.cancel_all()

    def reopen(self) -> None:
        """Take questions again (the person changed their mind about leaving)."""
        with self._lock:
            self._closed = False
