"""The offline demo's scenario: a scratch project and the scripted model turns of a lead and three teammates.

alice and bob each add a function; carol (plan mode) tests both once the lead says they are done; all offline.
"""

from __future__ import annotations

from typing import Any

CALC = '''"""A tiny calculator the demo team extends."""


def add(a, b):
    return a + b


def sub(a, b):
    return a - b
'''

MULTIPLY = "\n\ndef multiply(a, b):\n    return a * b\n"
DIVIDE = '\n\ndef divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError("divide by zero")\n    return a / b\n'
TESTS = """import unittest

import calc


class CalcTest(unittest.TestCase):
    def test_add_sub(self):
        self.assertEqual(calc.add(2, 3), 5)
        self.assertEqual(calc.sub(2, 3), -1)

    def test_multiply(self):
        self.assertEqual(calc.multiply(6, 7), 42)

    def test_divide(self):
        self.assertEqual(calc.divide(1, 4), 0.25)

    def test_divide_by_zero(self):
        with self.assertRaises(ZeroDivisionError):
            calc.divide(1, 0)


if __name__ == "__main__":
    unittest.main()
"""
REQUEST_ID = r'{{re:"requestId":"([^"]+)"}}'
DONE_MARK = "DEMO COMPLETE"  # the scenario's last words (the reaper looks for them in the lead's pane)
PROMPT = "Extend calc.py with multiply() and divide(), with tests, using a team of three."


def files() -> dict[str, str]:
    return {"calc.py": CALC, "README.md": "Scratch project of `agentteams demo`; removed when the demo ends.\n"}


class Pace:
    """Delays that make a scripted run watchable; `speed` 0 runs it flat out (tests)."""

    def __init__(self, speed: float) -> None:
        self.speed = speed

    def turn(self, blocks: list[dict[str, Any]], *, think_ms: int = 700, **extra: Any) -> dict[str, Any]:
        turn: dict[str, Any] = {"content": blocks, **extra}
        if self.speed > 0:
            turn.update(delay_ms=int(think_ms * self.speed), delta_delay_ms=max(1, int(25 * self.speed)), chunk=8)
        return turn


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def use(tool_name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": tool_name, "input": args}


def _lead(team: str, pace: Pace) -> list[dict[str, Any]]:
    t = pace.turn
    members = ("alice", "bob", "carol")
    spawn = {
        "alice": "You are alice, a developer. You own task #1 (add multiply() to calc.py). START-alice",
        "bob": "You are bob, a developer. You own task #2 (add divide() to calc.py). START-bob",
        "carol": "You are carol, the tester. You own task #3: test calc.py once tasks #1 and #2 are done.",
    }
    return [
        t([text("I'll split this between a small team."), use("TeamCreate", team_name=team, description="calc")]),
        t([use("TaskCreate", subject="Add multiply()", description="multiply(a, b) in calc.py")], think_ms=300),
        t([use("TaskCreate", subject="Add divide()", description="divide(a, b); raise on zero")], think_ms=300),
        t(
            [use("TaskCreate", subject="Write and run tests", description="test_calc.py for every function")],
            think_ms=300,
        ),
        t([use("TaskUpdate", taskId="3", addBlockedBy=["1", "2"])], think_ms=300),
        t([use("TaskUpdate", taskId="1", owner="alice")], think_ms=300),
        t([use("TaskUpdate", taskId="2", owner="bob")], think_ms=300),
        *[
            t(
                [
                    use(
                        "Task",
                        name=n,
                        team_name=team,
                        description=f"teammate {n}",
                        prompt=spawn[n],
                        **({"mode": "plan"} if n == "carol" else {}),
                    )
                ],
                think_ms=400,
            )
            for n in members
        ],
        t([use("TaskUpdate", taskId="3", owner="carol")], think_ms=300),
        t([text("The team is at work: alice and bob write the functions; carol tests them once both are done.")]),
        t(
            [
                text("Both functions are in. Telling carol to start on the tests."),
                use(
                    "SendMessage",
                    to="carol",
                    message="Tasks #1 and #2 are done: plan the tests now. GO-TESTS",
                    summary="start the tests",
                ),
            ],
            wait_for=["Task #1 done", "Task #2 done"],
        ),
        t([text("Carol is planning the tests.")], think_ms=300),
        t(
            [
                text("Carol's plan covers every function. Approving it."),
                use(
                    "SendMessage",
                    to="carol",
                    message={"type": "plan_approval_response", "request_id": REQUEST_ID, "approve": True},
                ),
            ],
            wait_for="plan_approval_request",
        ),
        t([text("Approved carol's plan.")]),
        t(
            [
                text("All tasks are done and the tests pass. Asking the team to shut down."),
                use("SendMessage", to="alice", message={"type": "shutdown_request", "reason": "work done"}),
            ],
            wait_for="TESTS-PASSED",
        ),
        t([use("SendMessage", to="bob", message={"type": "shutdown_request", "reason": "work done"})], think_ms=300),
        t([use("SendMessage", to="carol", message={"type": "shutdown_request", "reason": "work done"})], think_ms=300),
        t([text("Waiting for the teammates to stop.")], passable=True),  # gone already: straight on
        t([use("TeamDelete")], wait_for=[f"Teammate {n} shut down" for n in members]),
        t(
            [
                text(
                    "Done: calc.py has multiply() and divide(), test_calc.py passes, and the team is cleaned up. "
                    f"{DONE_MARK}. Press Ctrl-D to leave."
                )
            ]
        ),
    ]


def _developer(name: str, task: str, code: str, check: str, pace: Pace) -> list[dict[str, Any]]:
    t = pace.turn
    fn = check.split("(", maxsplit=1)[0]
    return [
        t([text(f"I'll take task #{task}."), use("TaskUpdate", taskId=task, status="in_progress")]),
        t([use("Bash", command=f"cat >> calc.py <<'EOF'{code}EOF")], think_ms=1200),
        t([use("Bash", command=f"python3 -c 'import calc; print(calc.{check})'")]),
        t([use("TaskUpdate", taskId=task, status="completed")], think_ms=400),
        t(
            [
                use(
                    "SendMessage",
                    to="carol",
                    message=f"{fn}() is in calc.py; please cover it in the tests.",
                    summary=f"{fn}() ready for tests",
                )
            ]
        ),
        t(
            [
                use(
                    "SendMessage",
                    to="team-lead",
                    message=f"Task #{task} done: {fn}() added and checked.",
                    summary=f"task #{task} done",
                )
            ],
            think_ms=400,
        ),
        t([text(f"Task #{task} is done.")], think_ms=300),
    ]


def _carol(pace: Pace) -> list[dict[str, Any]]:
    t = pace.turn
    plan = "Plan: write test_calc.py with unittest cases for add, sub, multiply, divide and divide-by-zero; run it."
    return [
        t(
            [
                text("Starting task #3. Reading calc.py first."),
                use("TaskUpdate", taskId="3", status="in_progress"),
                use("Read", file_path="calc.py"),
            ]
        ),
        t([text("I'm in plan mode, so the plan goes to the lead first."), use("ExitPlanMode", plan=plan)]),
        t([text("Waiting for the lead to approve my plan.")], think_ms=300),
    ]


def _carol_approved(pace: Pace) -> list[dict[str, Any]]:
    t = pace.turn
    return [
        t([text("Plan approved. Writing the tests."), use("Write", file_path="test_calc.py", content=TESTS)]),
        t([use("Bash", command="python3 -m unittest -v test_calc 2>&1 | tail -4")], think_ms=1000),
        t([use("TaskUpdate", taskId="3", status="completed")], think_ms=400),
        t([use("SendMessage", to="team-lead", message="TESTS-PASSED: 4 tests ran OK.", summary="tests pass")]),
        t([text("All tests pass.")], think_ms=300),
    ]


def scenario(team: str, speed: float = 1.0) -> dict[str, Any]:
    """The mock server script for the demo team `team`."""
    pace = Pace(speed)
    routes: list[dict[str, Any]] = []
    for name in ("alice", "bob", "carol"):
        me = f"Your name is {name}"
        approve = {"type": "shutdown_response", "request_id": REQUEST_ID, "approve": True}
        routes.append(
            {
                "name": f"{name}-shutdown",
                "match": {"system": me, "last_prompt": "shutdown_request"},
                "turns": [pace.turn([use("SendMessage", to="team-lead", message=approve)], think_ms=300)],
            }
        )
    routes += [
        {"name": "alice-work", "match": {"system": "Your name is alice", "last_prompt": "START-alice"},
         "turns": _developer("alice", "1", MULTIPLY, "multiply(6, 7)", pace)},
        {"name": "bob-work", "match": {"system": "Your name is bob", "last_prompt": "START-bob"},
         "turns": _developer("bob", "2", DIVIDE, "divide(1, 4)", pace)},
        {"name": "carol-go", "match": {"system": "Your name is carol", "last_prompt": "GO-TESTS"},
         "turns": _carol(pace)},
        {"name": "carol-approved", "match": {"system": "Your name is carol", "last_prompt": "[Plan Approved]"},
         "turns": _carol_approved(pace)},
    ]  # fmt: skip
    for name in ("alice", "bob", "carol"):
        routes.append({"name": f"{name}-other", "match": {"system": f"Your name is {name}"}, "turns": [],
                       "idle": pace.turn([text("Noted.")], think_ms=300)})  # fmt: skip
    routes.append({"name": "lead", "match": {"system": "You lead a team"}, "turns": _lead(team, pace),
                   "idle": pace.turn([text("Noted.")], think_ms=300)})  # fmt: skip
    return {"routes": routes, "fallback": "This is the offline demo: only the scripted scenario is available."}
