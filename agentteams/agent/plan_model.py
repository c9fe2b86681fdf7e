"""`opusplan`'s switch, as Claude Code 2.1.332 makes it: each request of the main agent goes to opus's model while the
permission mode is plan and to sonnet's otherwise, following the mode as it changes (Shift-Tab, ExitPlanMode,
set_permission_mode); the system prompt stays as it was (2.1.332 sends the same one to both)."""

from __future__ import annotations

from collections.abc import Callable

from agentteams.agent.loop import Agent


def follow_plan_mode(
    agent: Agent, mode: Callable[[], str], models: Callable[[], tuple[str, str | None]], then: Callable[[], None]
) -> None:
    """Before each of `agent`'s model calls, pick its model, then call `then`: `models()` gives (the model, the one
    plan mode takes instead, or None), read each time, so /model and set_model take effect at the next call."""

    def pick() -> None:
        model, planning = models()
        agent.settings.model = planning if planning is not None and mode() == "plan" else model
        then()

    agent.before_call = pick
