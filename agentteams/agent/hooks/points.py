"""Where hooks fire, event by event: the payload fields each event carries (Claude Code's documented shapes, plus
our team events) and what its outcome means to the caller. One `HookPoints` per agent; a subagent's own copy
fires SubagentStop where the main agent fires Stop. Without hooks configured, nothing of the runner is imported."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentteams.errors import HookAnswerError
from agentteams.settings.types import Settings
from agentteams.tools.base import ToolResult
from agentteams.tools.runtime_hooks import TaskHookInfo

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from agentteams.agent.hooks.runner import HookRunner
    from agentteams.agent.hooks.spec import HookCommand, Outcome

SessionSource = Literal["startup", "resume", "clear", "compact"]
EndReason = Literal["clear", "logout", "prompt_input_exit", "other"]


class HookPoints:
    """The hooks of one agent (`runner` None: none configured, every point a no-op). `subagent` holds a
    subagent's agent_id / agent_type / agent_transcript_path."""

    def __init__(self, runner: HookRunner | None, subagent: dict[str, str] | None = None) -> None:
        self.runner = runner
        self.subagent = subagent
        self.halted: str | None = None  # a hook said `continue: false`: the turn ends after this tool batch
        self.asks_person = True  # False for a teammate: its permission questions go to its lead, not a person
        self._ended = False

    @classmethod
    def build(
        cls, settings: Settings, *, cwd: Path, session_id: str, transcript_path: str,
        permission_mode: Callable[[], str], secrets: Sequence[str | None] = (),
    ) -> HookPoints:  # fmt: skip
        if not settings.hooks or settings.merged.get("disableAllHooks") is True:  # Claude Code's off switch
            return cls(None)
        from agentteams.agent.hooks.runner import HookRunner  # only with hooks: off every start-up without them

        return cls(HookRunner(settings, cwd=cwd, session_id=session_id, transcript_path=transcript_path,
                              permission_mode=permission_mode, secrets=secrets))  # fmt: skip

    def active(self, event: str) -> bool:
        return self.runner is not None and self.runner.active(event)

    def add(self, hooks: Sequence[HookCommand], runner: Callable[[], HookRunner]) -> None:
        """An SDK program's hooks from now on (`runner` makes one when no settings file configured any)."""
        if self.runner is None:
            self.runner = runner()
        self.runner.add(hooks)

    def for_subagent(self, agent_id: str, agent_type: str, transcript_path: str | None = None) -> HookPoints | None:
        """A subagent's hook points (SubagentStop for Stop), or None when no hook is configured; `transcript_path`
        its own file (the session's, when it has none)."""
        if self.runner is None:
            return None
        path = transcript_path or self.runner.transcript_path
        ids = {"agent_id": agent_id, "agent_type": agent_type, "agent_transcript_path": path}
        sub = HookPoints(self.runner, ids)
        sub.asks_person = self.asks_person
        return sub

    def _fire(self, event: str, fields: dict[str, Any], match: str | None = None) -> Outcome:
        if self.runner is None:
            from agentteams.agent.hooks.spec import Outcome

            return Outcome()
        outcome = self.runner.fire(event, fields, match)
        if outcome.stop:
            self.halted = outcome.stop_reason or "no reason given"
            self.runner.warn(f"a {event} hook stopped the agent: {self.halted}")
        return outcome

    # -- the agent loop -----------------------------------------------------------------------------

    def pre_tool(self, name: str, args: dict[str, Any], use_id: str) -> Outcome:
        fields = {"tool_name": name, "tool_input": args, "tool_use_id": use_id}
        outcome = self._fire("PreToolUse", fields, match=name)
        if outcome.failed:  # no usable verdict: the call does not run (Claude Code fails closed here)
            outcome.blocked, outcome.reason = True, "its answer named another hook event, so the call was not run"
        return outcome

    def post_tool(self, name: str, args: dict[str, Any], use_id: str, result: ToolResult, ms: int) -> str | None:
        """What the model is told beside the tool's result: exit-2 stderr, a block reason, additional context."""
        fields = {"tool_name": name, "tool_input": args, "tool_response": tool_response(name, result),
                  "tool_use_id": use_id, "duration_ms": ms}  # fmt: skip
        outcome = self._fire("PostToolUse", fields, match=name)
        lines = [f"PostToolUse:{name} hook blocking error: {outcome.reason}"] if outcome.blocked else []
        lines += [f"PostToolUse:{name} hook additional context: {c}" for c in outcome.context]
        return "\n\n".join(lines) or None

    def stop(self, last_text: str, active: bool) -> str | None:
        """The turn is about to end: a reason to go on instead (a block), or None."""
        fields: dict[str, Any] = {"stop_hook_active": active, "last_assistant_message": last_text}
        fields.update(background_tasks=[], session_crons=[])  # as the real 2.1.330 sends: we run none of either
        if self.subagent is not None:
            outcome = self._fire("SubagentStop", {**fields, **self.subagent}, match=self.subagent["agent_type"])
        else:
            outcome = self._fire("Stop", fields)
        self.halted = None  # a turn's end: `continue: false` means the same as letting it end
        if outcome.stop:
            return None
        return outcome.reason if outcome.blocked else None

    def notify(self, message: str, kind: str = "permission_prompt") -> None:
        """The agent waits for the person (a permission question); hooks only hear of it."""
        if not self.asks_person:
            return
        self._fire("Notification", {"message": message, "notification_type": kind}, match=kind)

    # -- the session --------------------------------------------------------------------------------

    def submitted(self, prompt: str) -> tuple[str | None, str | None]:
        """UserPromptSubmit: the prompt to send (any context after it), or None and the line saying why a hook
        blocked it (shown to the person; the model never sees the prompt); HookAnswerError for a callback's answer
        naming another event."""
        if self.runner is None:
            return prompt, None
        self.runner.new_prompt()
        outcome = self._fire("UserPromptSubmit", {"prompt": prompt})
        if outcome.failed:  # Claude Code ends the turn on it, the prompt unsent
            raise HookAnswerError(outcome.failed)
        if outcome.blocked or outcome.stop:
            why = "\n".join(outcome.said) or outcome.stop_reason or "no reason given"
            return None, f"a UserPromptSubmit hook blocked the prompt: {why}"
        return "\n\n".join([prompt, *outcome.context]), None

    def session_start(self, source: SessionSource, model: str) -> list[str]:
        """SessionStart's context for the model (plain stdout or additionalContext)."""
        if self.runner is None:
            return []
        return self._fire("SessionStart", {"source": source, "model": model}, match=source).context

    def pre_compact(self, trigger: str, instructions: str) -> tuple[str | None, list[str]]:
        """PreCompact: why a hook stopped the compaction (exit 2, a block, `continue: false`), else None; and what
        the hooks add to the summary's instructions (plain stdout or additionalContext)."""
        if self.runner is None:
            return None, []
        outcome = self._fire("PreCompact", {"trigger": trigger, "custom_instructions": instructions}, match=trigger)
        self.halted = None  # a stop here stops the compaction, not the turn
        if outcome.blocked or outcome.stop:  # "[command]: stderr", as the real CLI words it
            return outcome.reason or outcome.stop_reason or "no reason given", []
        return None, outcome.context

    def cleared(self, session_id: str, transcript_path: str, model: str, source: SessionSource = "clear") -> list[str]:
        """/clear (or /resume), as Claude Code: SessionEnd (reason `clear`, or `other`) for the old session, then
        SessionStart (source `clear` or `resume`) for the new one, whose ids later payloads carry; its context."""
        if self.runner is None:
            return []
        self.session_end("clear" if source == "clear" else "other")
        self.runner.session_id, self.runner.transcript_path = session_id, transcript_path
        self._ended = False
        return self.session_start(source, model)

    def session_end(self, reason: EndReason) -> None:
        if self._ended or self.runner is None:
            return
        self._ended = True
        self._fire("SessionEnd", {"reason": reason}, match=reason)
        self.runner.drain()

    # -- the team -----------------------------------------------------------------------------------

    def teammate_idle(self, name: str, team: str) -> tuple[str | None, bool]:
        """Feedback keeping the teammate working (exit 2 or a block), and whether a hook said to stop."""
        if self.runner is None:
            return None, False
        outcome = self._fire("TeammateIdle", {"teammate_name": name, "team_name": team})
        return (outcome.reason if outcome.blocked else None), outcome.stop

    def task_created(self, info: TaskHookInfo) -> str | None:
        """Feedback refusing the new task (exit 2 or a block), else None."""
        outcome = self._fire("TaskCreated", _task_fields(info))
        return outcome.reason if outcome.blocked else None

    def task_completed(self, info: TaskHookInfo) -> str | None:
        """Feedback refusing the completion (exit 2 or a block), else None."""
        outcome = self._fire("TaskCompleted", _task_fields(info))
        return outcome.reason if outcome.blocked else None

    def teammate_spawned(self, name: str, team: str, agent_id: str, agent_type: str, backend: str) -> None:
        fields = {"teammate_name": name, "team_name": team, "agent_id": agent_id, "agent_type": agent_type,
                  "backend": backend}  # fmt: skip
        if self.runner is not None:
            self.runner.fire_later("TeammateSpawned", fields)

    def teammate_died(self, name: str, team: str, agent_id: str | None, reason: str) -> None:
        fields = {"teammate_name": name, "team_name": team, "agent_id": agent_id, "reason": reason}
        if self.runner is not None:
            self.runner.fire_later("TeammateDied", fields)

    def team_deleted(self, team: str) -> None:
        if self.runner is not None:
            self.runner.fire_later("TeamDeleted", {"team_name": team})

    def worktree_create(self, name: str) -> tuple[str | None, str]:
        """A configured WorktreeCreate hook makes the worktree instead of git (Claude Code's contract): the path
        it printed, or None and why it failed."""
        outcome = self._fire("WorktreeCreate", {"name": name})
        path = next((line.strip() for text in outcome.context for line in text.splitlines() if line.strip()), None)
        if outcome.blocked or path is None:
            why = outcome.reason or "; ".join(outcome.warnings) or "it succeeded but printed no worktree path"
            return None, f"WorktreeCreate hook failed: {why}"
        return path, ""

    def worktree_remove(self, path: str) -> bool:
        """A worktree a WorktreeCreate hook made goes through the WorktreeRemove hooks; True when they removed it."""
        outcome = self._fire("WorktreeRemove", {"worktree_path": path})
        return not outcome.blocked and not outcome.warnings


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
