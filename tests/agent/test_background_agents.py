"""Background subagents' bookkeeping (agent/background_agents.py): each one's end is delivered once, a failed one's
too (its caller would otherwise wait for its notice for ever), and it counts as running until its notice is out."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agentteams.agent.background_agents import BackgroundAgents, Finished
from agentteams.errors import AgentTeamsError

DEADLINE = 10.0


def _agents() -> tuple[BackgroundAgents, list[Finished], list[int]]:
    delivered: list[Finished] = []
    running_then: list[int] = []

    def deliver(finished: Finished) -> None:
        delivered.append(finished)
        running_then.append(agents.running())

    agents = BackgroundAgents(deliver)
    return agents, delivered, running_then


def test_a_finished_agent_is_delivered_once_with_its_report_while_it_still_counts_as_running() -> None:
    agents, delivered, running_then = _agents()
    go = threading.Event()

    def work() -> tuple[str, dict[str, Any]]:
        assert go.wait(DEADLINE)
        return "the report", {"totalTokens": 12, "totalToolUseCount": 2}

    agents.launch("a0123456789abcdef", "toolu_1", "look around", "Explore", "/x/agent.jsonl", work)
    assert agents.running() == 1 and not agents.wait_all(0.05)
    go.set()
    assert agents.wait_all(DEADLINE)
    [done] = delivered
    assert (done.status, done.report, done.tokens, done.tool_uses) == ("completed", "the report", 12, 2)
    assert running_then == [1]  # the notice is out before it stops counting: a run that waits cannot miss it
    notice = done.notice()
    assert notice.startswith("<task-notification>") and "<task-id>a0123456789abcdef</task-id>" in notice
    assert "<status>completed</status>" in notice and "<result>the report</result>" in notice


@pytest.mark.parametrize("error", [AgentTeamsError("the API refused"), RuntimeError("a bug")])
def test_a_failed_agent_is_delivered_as_failed(error: Exception) -> None:
    agents, delivered, _ = _agents()

    def work() -> tuple[str, dict[str, Any]]:
        raise error

    agents.launch("a1", None, "d", "general-purpose", "/x", work)
    assert agents.wait_all(DEADLINE)
    [done] = delivered
    assert done.status == "failed" and str(error) in done.report and "<status>failed</status>" in done.notice()
    assert "<tool-use-id>" not in done.notice()
