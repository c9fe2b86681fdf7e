"""A question the lead asks for a teammate is withdrawn with its scope (team/lead/ask_scope.py, ui/questions.py):
the asking thread gets the safe answer at once, the question leaves the prompt, the next one becomes current."""

from __future__ import annotations

import threading

from agentteams.team.lead.ask_scope import Withdrawable, asking
from agentteams.ui.questions import Question, Questions, permission_question
from tests.support.wait import wait_until


def ask_in(questions: Questions, question: Question, scope: Withdrawable | None, out: list[str]) -> threading.Thread:
    def run() -> None:
        if scope is None:
            out.append(questions.ask(question))
            return
        with asking(scope):
            out.append(questions.ask(question))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_withdrawn_question_leaves_the_prompt_and_the_next_becomes_current() -> None:
    shown: list[str] = []
    questions = Questions(lambda q: shown.append(q.text))
    first, second = permission_question("for alice?", "always"), permission_question("for bob?", "always")
    scope, said, other = Withdrawable(), list[str](), list[str]()
    asker = ask_in(questions, first, scope, said)
    wait_until(lambda: questions.current() is first, 5, "alice's question")
    later = ask_in(questions, second, None, other)
    scope.withdraw()  # bob's question queued behind alice's or not yet asked: it is current next either way
    asker.join(5)
    wait_until(lambda: questions.current() is second, 5, "bob's question current")
    assert said == ["deny"] and questions.current() is second and shown == ["for alice?", "for bob?"]
    assert questions.answer("1")
    later.join(5)
    assert other == ["allow"] and questions.current() is None


def test_a_scope_withdrawn_before_the_question_is_asked_ends_it_at_once() -> None:
    questions = Questions(lambda q: None)
    scope, said = Withdrawable(), list[str]()
    scope.withdraw()
    ask_in(questions, permission_question("late?", "always"), scope, said).join(5)
    assert said == ["deny"] and questions.current() is None
