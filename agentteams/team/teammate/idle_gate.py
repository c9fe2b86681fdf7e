"""A teammate's turn end as its hooks allow it (as the real 2.1.330 does): TaskCompleted for each in-progress task it
owns, then TeammateIdle; a hook's block keeps it working with the feedback as its next prompt."""

from __future__ import annotations

import threading

from agentteams.agent.loop import TurnResult
from agentteams.agent.session import Session
from agentteams.tools.runtime_hooks import TaskHookInfo


def until_idle_allowed(session: Session, team: str, name: str, stop: threading.Event, result: TurnResult) -> TurnResult:
    """Turns on the hooks' feedback until they let the teammate go idle; `continue: false` stops it (sets `stop`)."""
    while result.stop_reason == "end_turn" and not stop.is_set() and not session.ctx.signals.exit_requested:
        feedback, stopped = idle_gate(session, team, name)
        if stopped:  # the hook's stopReason is already a warning line
            stop.set()
        if feedback is None or stopped:
            break
        result = session.run(feedback)
    return result


def idle_gate(session: Session, team: str, name: str) -> tuple[str | None, bool]:
    """A teammate's turn is over: TaskCompleted for each in-progress task it owns (a pass leaves the task as it is),
    then TeammateIdle. The feedback for another turn if any of them exited 2 (each block as "<Event> hook
    feedback:"), and whether one said `continue: false` (the teammate stops)."""
    hooks, feedback = session.hooks, []
    if hooks.active("TaskCompleted"):
        mine = [t for t in session.store.tasks.list_tasks(team) if t.owner == name and t.status == "in_progress"]
        for t in mine:
            refusal = hooks.task_completed(TaskHookInfo(t.id, t.subject, t.description, name, team))
            if refusal is not None:
                feedback.append(f"TaskCompleted hook feedback:\n{refusal}")
    idle, stop = hooks.teammate_idle(name, team)
    if idle is not None:
        feedback.append(f"TeammateIdle hook feedback:\n{idle}")
    return "\n\n".join(feedback) or None, stop
