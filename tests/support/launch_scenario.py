"""The demo's scenario as a team file: three roles, five seed tasks, and the scripted turns that run it once the lead
has made the team itself (no TeamCreate, TaskCreate or Task call of its model). Built from run/demo/script.py."""

from __future__ import annotations

from typing import Any

from agentteams.run.demo import script as demo
from agentteams.run.demo.script import Pace, text, use

GATE = "EXPORTED"  # the lead's first turn waits for this file in its directory: the test exports the team first
TEAM_FILE = '''\
# the demo's team, declared: alice and bob write, carol (plan mode) tests once both are done
[team]
name = "calc"
description = "Extend calc.py"

[lead]
instructions = """
Keep the team on the task list; tell carol when tasks #1 and #2 are done.
Shut the team down when the tests pass."""

[[role]]
name = "alice"
prompt = "You are alice, a developer. You own tasks #1 (multiply) and #4 (its docs). START-alice"
mode = "bypassPermissions"
model = "haiku"

[[role]]
name = "bob"
prompt = "You are bob, a developer. You own task #2 (add divide() to calc.py). START-bob"
mode = "bypassPermissions"
max_budget_tokens = 500000

[[role]]
name = "carol"
prompt = "You are carol, the tester. You own tasks #3 and #5: test calc.py once #1 and #2 are done."
mode = "plan"

[[task]]
id = "multiply"
subject = "Add multiply()"
description = "multiply(a, b) in calc.py"
owner = "alice"

[[task]]
id = "divide"
subject = "Add divide()"
description = "divide(a, b); raise on zero"
owner = "bob"

[[task]]
id = "tests"
subject = "Write the tests"
owner = "carol"
blocked_by = ["multiply", "divide"]

[[task]]
id = "docs"
subject = "Document multiply()"
owner = "alice"
blocked_by = ["multiply"]

[[task]]
id = "run"
subject = "Run the tests"
owner = "carol"
blocked_by = ["tests"]
'''


def _lead(pace: Pace) -> list[dict[str, Any]]:
    gate = f"until [ -f {GATE} ]; do sleep 0.05; done; echo gate open"
    seeded = demo._lead("calc", pace)[12:]  # the demo's lead once its team is made and staffed
    return [pace.turn([use("Bash", command=gate)]), pace.turn([text("The team is at work.")]), *seeded]


def _alice(pace: Pace) -> list[dict[str, Any]]:
    turns = demo._developer("alice", "1", demo.MULTIPLY, "multiply(6, 7)", pace)
    docs = [
        pace.turn([use("TaskUpdate", taskId="4", status="in_progress")]),
        pace.turn([use("Bash", command="echo '- multiply(a, b): the product' >> README.md")]),
        pace.turn([use("TaskUpdate", taskId="4", status="completed")]),
    ]
    return [*turns[:4], *docs, *turns[4:]]


def _carol_approved(pace: Pace) -> list[dict[str, Any]]:
    turns = demo._carol_approved(pace)
    run = [
        pace.turn([use("TaskUpdate", taskId="5", status="in_progress")]),
        pace.turn([use("TaskUpdate", taskId="5", status="completed")]),
    ]
    return [*turns[:3], *run, *turns[3:]]


def scenario() -> dict[str, Any]:
    """The mock server's script: the demo's routes, the lead's and two workers' turns replaced."""
    pace = Pace(0)
    script = demo.scenario("calc", 0)
    replaced = {"lead": _lead(pace), "alice-work": _alice(pace), "carol-approved": _carol_approved(pace)}
    for route in script["routes"]:
        route["turns"] = replaced.get(route["name"], route["turns"])
    return script
