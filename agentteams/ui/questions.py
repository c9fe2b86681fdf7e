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


@dataclass
class Question:
    text: str  # printed once, when the question becomes the current one
    prompt: str  # the input line's prompt while it waits, e.g. "allow? [y/n/a] "
    choices: dict[str, str]  # what the person may type (lowercased) -> the answer
    fallback: str  # the answer when nobody can answer (the REPL is closing, the turn was interrupted)
    answer: str | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def settle(self, answer: str) -> None:
        self.answer = answer
        self.done.set()


def yes_no(text: str, *, always: bool) -> Question:
    """A permission question: y / n, and `a` (allow from now on) when `always`."""
    choices = dict.fromkeys(YES, "allow") | dict.fromkeys(NO, "deny")
    if always:
        choices |= dict.fromkeys(ALWAYS, "always")
    keys = "y/n/a" if always else "y/n"
    return Question(text=text, prompt=f"allow? [{keys}] ", choices=choices, fallback="deny")


class Questions:
    """The queue of open questions; the oldest is the current one, answered by the next line entered."""

    def __init__(self, on_current: Callable[[Question], None]) -> None:
        self._on_current = on_current  # shows a question when it reaches the front
        self._lock = threading.Lock()
        self._open: list[Question] = []
        self._closed = False

    def ask(self, question: Question) -> str:
        """Block until the person answers (called from any thread but the input loop's)."""
        with self._lock:
            if self._closed:
                return question.fallback
            self._open.append(question)
            first = len(self._open) == 1
        if first:
            self._on_current(question)
        question.done.wait()
        return question.answer or question.fallback

    def current(self) -> Question | None:
        with self._lock:
            return self._open[0] if self._open else None

    def answer(self, text: str) -> bool:
        """Answer the current question with a typed line; False when the line is not one of its choices."""
        with self._lock:
            if not self._open:
                return False
            question = self._open[0]
            answer = question.choices.get(text.strip().lower())
            if answer is None:
                return False
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
