"""Where hooks fire, event by event: the payload fields each event carries (Claude Code's documented shapes, plus
our team events) and what its outcome means to the caller. One `HookPoints` per agent; a subagent's own copy
fires SubagentStop where the main agent fires Stop.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from agentteams.agent.hookrun import HookRunner
from agentteams.agent.hookspec import Outcome
from agentteams.tools.base import ToolResult
from agentteams.tools.hooks import TaskHookInfo

SessionSource = Literal["startup", "resume", "clear", "compact"]
EndReason = Literal["clear", "logout", "prompt_input_exit", "other"]


@dataclass
class HookPoints:
    """The hooks of one agent. `subagent` holds a subagent's agent_id / agent_type / agent_transcript_path."""

    runner: HookRunner
    subagent: dict[str, str] | None = None
    halted: str | None = None  # a hook said `continue: false`: the turn ends after this tool batch
    _ended: bool = field(default=False, repr=False)

    def for_subagent(self, agent_id: str, agent_type: str) -> HookPoints:
        ids = {"agent_id": agent_id, "agent_type": agent_type, "agent_transcript_path": self.runner.transcript_path}
        return replace(self, subagent=ids, halted=None)

    def _note_halt(self, outcome: Outcome) -> Outcome:
        if outcome.stop:
            self.halted = outcome.stop_reason or "a hook asked to stop"
        return outcome

    # -- the agent loop -----------------------------------------------------------------------------

    def pre_tool(self, name: str, args: dict[str, Any], use_id: str) -> Outcome:
        fields = {"tool_name": name, "tool_input": args, "tool_use_id": use_id}
        return self._note_halt(self.runner.fire("PreToolUse", fields, match=name))

    def post_tool(self, name: str, args: dict[str, Any], use_id: str, result: ToolResult, ms: int) -> str | None:
        """What the model is told beside the tool's result: exit-2 stderr, a block reason, additional context."""
        fields = {"tool_name": name, "tool_input": args, "tool_response": tool_response(name, result),
                  "tool_use_id": use_id, "duration_ms": ms}  # fmt: skip
        outcome = self._note_halt(self.runner.fire("PostToolUse", fields, match=name))
        lines = [f"PostToolUse:{name} hook blocking error: {outcome.reason}"] if outcome.blocked else []
        lines += [f"PostToolUse:{name} hook additional context: {c}" for c in outcome.context]
        return "\n\n".join(lines) or None

    def stop(self, last_text: str, active: bool) -> str | None:
        """The turn is about to end: a reason to go on instead (a block), or None."""
        fields: dict[str, Any] = {"stop_hook_active": active, "last_assistant_message": last_text}
        fields.update(background_tasks=[], session_crons=[])  # as the real 2.1.330 sends: we run none of either
        if self.subagent is not None:
            outcome = self.runner.fire("SubagentStop", {**fields, **self.subagent}, match=self.subagent["agent_type"])
        else:
            outcome = self.runner.fire("Stop", fields)
        if outcome.stop:
            return None
        return outcome.reason if outcome.blocked else None

    def notify(self, message: str, kind: str = "permission_prompt") -> None:
        """The agent waits for the person (a permission question); hooks only hear of it."""
        self.runner.fire("Notification", {"message": message, "notification_type": kind}, match=kind)

    # -- the session --------------------------------------------------------------------------------

    def submitted(self, prompt: str) -> tuple[str | None, str | None]:
        """UserPromptSubmit: the prompt to send (any context after it), or None and the line saying why a hook
        blocked it (shown to the person; the model never sees the prompt)."""
        self.runner.new_prompt()
        outcome = self.runner.fire("UserPromptSubmit", {"prompt": prompt})
        if outcome.blocked or outcome.stop:
            why = outcome.reason or outcome.stop_reason or "no reason given"
            return None, f"a UserPromptSubmit hook blocked the prompt: {why}"
        return "\n\n".join([prompt, *outcome.context]), None

    def session_start(self, source: SessionSource, model: str) -> list[str]:
        """SessionStart's context for the model (plain stdout or additionalContext)."""
        return self.runner.fire("SessionStart", {"source": source, "model": model}, match=source).context

    def session_end(self, reason: EndReason) -> None:
        if self._ended:
            return
        self._ended = True
        self.runner.fire("SessionEnd", {"reason": reason}, match=reason)
        self.runner.drain()

    # -- the team -----------------------------------------------------------------------------------

    def teammate_idle(self, name: str, team: str) -> Outcome:
        return self.runner.fire("TeammateIdle", {"teammate_name": name, "team_name": team})

    def task_created(self, info: TaskHookInfo) -> str | None:
        """Feedback refusing the new task (exit 2 or a block), else None."""
        outcome = self.runner.fire("TaskCreated", _task_fields(info))
        return outcome.reason if outcome.blocked else None

    def task_completed(self, info: TaskHookInfo) -> str | None:
        """Feedback refusing the completion (exit 2 or a block), else None."""
        outcome = self.runner.fire("TaskCompleted", _task_fields(info))
        return outcome.reason if outcome.blocked else None

    def teammate_spawned(self, name: str, team: str, agent_id: str, agent_type: str, backend: str) -> None:
        fields = {"teammate_name": name, "team_name": team, "agent_id": agent_id, "agent_type": agent_type,
                  "backend": backend}  # fmt: skip
        self.runner.fire_later("TeammateSpawned", fields)

    def teammate_died(self, name: str, team: str, agent_id: str | None, reason: str) -> None:
        fields = {"teammate_name": name, "team_name": team, "agent_id": agent_id, "reason": reason}
        self.runner.fire_later("TeammateDied", fields)

    def team_deleted(self, team: str) -> None:
        self.runner.fire_later("TeamDeleted", {"team_name": team})


def tool_response(name: str, result: ToolResult) -> dict[str, Any]:
    """PostToolUse's `tool_response`: Bash in the shape Claude Code gives it (hook scripts read `.stdout`; our
    shell captures both streams as one), any other tool as its text and structured data."""
    data = result.data or {}
    if name == "Bash":
        return {"stdout": result.content, "stderr": "", "interrupted": bool(data.get("interrupted")), "isImage": False,
                "noOutputExpected": False}  # fmt: skip
    return {"content": result.content, **data}


def _task_fields(info: TaskHookInfo) -> dict[str, Any]:
    """Claude Code's task hook fields; `teammate_name` is the agent doing it (a teammate, or the lead)."""
    return {
        "task_id": info.task_id, "task_subject": info.subject, "task_description": info.description,
        "teammate_name": info.agent_name, "team_name": info.team_name,
    }  # fmt: skip
