"""Background subagents, as Claude Code 2.1.332 runs its Agent calls by default: the call answers at once with the
subagent's id while it works in a thread of its own, and its report reaches the caller as a task notification when it
ends; the runtime that attaches them delivers it (a new turn, or mid-turn after a tool result) and waits for them."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError

NOTICE_MARK = "<task-notification>"  # how a delivered notice begins (a run tells a turn it started from it)


@dataclass(frozen=True)
class Finished:
    """A background subagent that ended: what its notice and a program's lines say of it."""

    agent_id: str
    tool_use_id: str | None
    description: str
    kind: str
    status: Literal["completed", "failed"]
    report: str
    output_file: str
    tokens: int
    tool_uses: int
    duration_ms: int

    def notice(self) -> str:
        """The text the caller's model is given (the tags Claude Code's task notifications use; our own words)."""
        use = f"<tool-use-id>{self.tool_use_id}</tool-use-id>\n" if self.tool_use_id else ""
        said = "finished" if self.status == "completed" else "failed"
        return (
            f"{NOTICE_MARK}\n<task-id>{self.agent_id}</task-id>\n{use}<output-file>{self.output_file}</output-file>\n"
            f'<status>{self.status}</status>\n<summary>Agent "{self.description}" {said}</summary>\n'
            f"<result>{self.report}</result>\n<usage><subagent_tokens>{self.tokens}</subagent_tokens><tool_uses>"
            f"{self.tool_uses}</tool_uses><duration_ms>{self.duration_ms}</duration_ms></usage>\n"
            "</task-notification>\n(An automatic notice that a background agent ended, not a message from the user.)"
        )


class BackgroundAgents:
    """One session's background subagents: each runs in a thread; `deliver` hears of each as it ends."""

    def __init__(self, deliver: Callable[[Finished], None]) -> None:
        self._deliver = deliver
        self._cond = threading.Condition()
        self._running: set[str] = set()
        self.started = 0  # how many were started (a run's subagent_stats)

    def running(self) -> int:
        with self._cond:
            return len(self._running)

    def wait_all(self, timeout: float | None = None) -> bool:
        """Until none runs (True) or `timeout` passed (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._running, timeout)

    def launch(self, agent_id: str, tool_use_id: str | None, description: str, kind: str, output_file: str,
               work: Callable[[], tuple[str, dict[str, Any]]]) -> None:  # fmt: skip
        """Run `work` (the subagent to its end) in a thread of its own, then deliver its notice."""
        with self._cond:
            self._running.add(agent_id)
            self.started += 1
        began = time.monotonic()

        def run() -> None:
            report, detail = "", dict[str, Any]()
            status: Literal["completed", "failed"] = "completed"
            try:
                report, detail = work()
            except AgentTeamsError as e:  # the API refused it for good: its caller hears so
                report, status = str(e), "failed"
            except Exception as e:  # a bug must not go unheard: the caller would wait for this notice for ever
                report, status = f"the agent failed: {type(e).__name__}: {e}", "failed"
                diagnostics.warning("background agent %s failed: %s: %s", agent_id, type(e).__name__, e)
            finished = Finished(agent_id, tool_use_id, description, kind, status, report or "(no text)",
                                output_file, int(detail.get("totalTokens") or 0),
                                int(detail.get("totalToolUseCount") or 0),
                                int((time.monotonic() - began) * 1000))  # fmt: skip
            try:
                self._deliver(finished)
            finally:
                with self._cond:
                    self._running.discard(agent_id)
                    self._cond.notify_all()

        threading.Thread(target=run, name=f"agent-{agent_id}", daemon=True).start()
