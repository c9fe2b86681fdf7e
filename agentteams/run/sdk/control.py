"""The answers to an SDK program's control requests: `initialize` (its hooks registered once, the session described),
`interrupt`, `set_model`, `set_permission_mode`, `mcp_status` and the MCP changes, `get_context_usage`, `stop_task`,
`rewind_files`; any other subtype is an error reply naming it (never ignored: the program would wait for an answer)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from agentteams.agent.permissions.policy import parse_mode
from agentteams.errors import AgentTeamsError
from agentteams.model.aliases import switch_refusal
from agentteams.model.catalog import same_model
from agentteams.run.init_info import mcp_servers, server_info
from agentteams.run.sdk import mcp_control
from agentteams.run.sdk.asks import sdk_hooks
from agentteams.run.sdk.channel import ControlChannel
from agentteams.run.sdk.context_usage import context_usage
from agentteams.run.sdk.task_lines import BackgroundTasks
from agentteams.tools.runtime_hooks import MODE_ALIASES


class ControlRefused(AgentTeamsError):
    """A control request refused, with the error code Claude Code gives it."""

    def __init__(self, message: str, code: str, **extra: str) -> None:
        super().__init__(message)
        self.code, self.extra = code, extra  # more keys of the error reply (a refused model: the one kept)


MODES = ("acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan")
NO_BODY = None  # Claude Code's success without a `response` (mcp_toggle, mcp_reconnect)
# no file checkpoints are kept (only when a program enables checkpointing: agent/checkpoints.py): Claude Code's answer
NO_REWIND = "File rewinding is not enabled."


def _rewind(session: Any, request: dict[str, Any]) -> dict[str, Any]:
    dry_run = request.get("dry_run") is True
    if session.checkpoints is not None:
        answer: dict[str, Any] = session.checkpoints.rewind(str(request.get("user_message_id") or ""), dry_run=dry_run)
        return answer
    if dry_run:
        return {"canRewind": False, "error": NO_REWIND}
    raise AgentTeamsError(NO_REWIND)


# the requests answered from the session alone: (session, request) -> the answer's body
SESSION_ANSWERS: dict[str, Callable[[Any, dict[str, Any]], dict[str, Any] | None]] = {
    "mcp_status": lambda session, _request: {"mcpServers": mcp_servers(session)},
    "mcp_toggle": mcp_control.toggle,
    "mcp_reconnect": mcp_control.reconnect,
    "mcp_set_servers": mcp_control.set_servers,
    "get_context_usage": lambda session, _request: context_usage(session),
    "rewind_files": _rewind,
}


class ControlAnswers:
    """Answers for one session's program (`answer` is the channel's handler); `initialize` registers the program's
    hooks on its first call only."""

    def __init__(self, options: Any, *, may_bypass: bool = False) -> None:
        self.options = options
        self.runtime: Any = None  # set once the lead is built, before the channel starts
        self.lines: Any = None  # the session's stream-json lines (run/stream_lines.py), set with the runtime
        self.channel: ControlChannel | None = None  # the channel that asks this (it needs this to answer)
        # bypassPermissions only for a session started with it, --dangerously-skip-permissions or
        # --allow-dangerously-skip-permissions: a program never switches its safety off on its own
        self.may_bypass = may_bypass or options.permission_mode == "bypassPermissions"
        self.tasks = BackgroundTasks(lambda: options.session_id)  # the commands `stop_task` may name
        self._initialized = False
        self._lock = threading.Lock()

    def answer(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """The lines a control request is answered with: its reply, with what Claude Code writes before or after it
        (the replayed `/model` line before a model change, the status line after a mode change)."""
        request: dict[str, Any] = obj["request"] if isinstance(obj.get("request"), dict) else {}
        subtype = request.get("subtype")
        reply: dict[str, Any] = {"request_id": obj.get("request_id")}
        before: list[dict[str, Any]] = []
        try:
            body = self._answer(str(subtype), request, before)
        except AgentTeamsError as e:
            error = {"subtype": "error", "error": str(e)}
            if isinstance(e, ControlRefused):
                error |= {"error_code": e.code, **e.extra}
            return [{"type": "control_response", "response": reply | error}]
        after = [self._status()] if subtype == "set_permission_mode" else []
        success = reply | {"subtype": "success"} | ({} if body is NO_BODY else {"response": body})
        return [*before, {"type": "control_response", "response": success}, *after]

    def _answer(self, subtype: str, request: dict[str, Any], before: list[dict[str, Any]]) -> dict[str, Any] | None:
        session = self.runtime.session
        if subtype == "initialize":
            return self._initialize(request)
        if subtype == "interrupt":
            self.runtime.interrupt()
            return {"still_queued": []}
        if subtype == "set_model":
            name = str(request.get("model") or self.options.model)
            if (refusal := switch_refusal(name)) is not None:
                raise ControlRefused(refusal, "alias_1m_unsupported", model=session.model)
            was = session.model
            session.set_model(name)
            # as 2.1.332's /model says it: an alias with the model it names, any other name as given; nothing when
            # the switch keeps the model (another name of it: dated, undated, the provider's)
            said = name.strip() if session.model == name.strip() else f"{name.strip()} ({session.model})"
            if not same_model(session.model, was):
                before.append(self._replayed(f"<local-command-stdout>Set model to `{said}`</local-command-stdout>"))
            return {"model": session.model}
        if subtype == "set_permission_mode":
            mode = str(request.get("mode"))
            if mode not in MODES:
                raise ControlRefused(f"Cannot set permission mode: must be one of {', '.join(MODES)}", "invalid_mode")
            if mode == "bypassPermissions" and not self.may_bypass:
                raise ControlRefused("Cannot set permission mode to bypassPermissions: the session was not started "
                                     "with --dangerously-skip-permissions or --allow-dangerously-skip-permissions",
                                     "invalid_mode")  # fmt: skip
            session.policy.mode = parse_mode(MODE_ALIASES.get(mode, mode))
            return {"mode": mode}
        if subtype in SESSION_ANSWERS:
            return SESSION_ANSWERS[subtype](session, request)
        if subtype == "stop_task":
            before.extend(self._stopped(str(request.get("task_id") or "")))
            return {}
        raise ControlRefused(f"Unsupported control request subtype: {subtype}", "unsupported_request")

    def _stopped(self, task_id: str) -> list[dict[str, Any]]:
        """Stop a background command by its id: the lines saying so, as Claude Code writes them before its answer
        (none for an id it does not know, which it answers with success all the same)."""
        shells = self.runtime.session.ctx.shells
        shell = shells.get(task_id)
        if shell is None or shell.status != "running":
            return []
        shells.kill(shell)
        return self.tasks.stopped(task_id, shell.command, shell.take().text)

    def _replayed(self, text: str) -> dict[str, Any]:
        from agentteams.store.fs.atomic_json import now_iso

        return {"type": "user", "message": {"role": "user", "content": text}, "session_id": self.options.session_id,
                "parent_tool_use_id": None, "uuid": str(uuid.uuid4()), "timestamp": now_iso(),
                "isReplay": True}  # fmt: skip

    def _status(self) -> dict[str, Any]:
        mode = self.runtime.session.policy.mode
        return {"type": "system", "subtype": "status", "status": None, "permissionMode": mode,
                "uuid": str(uuid.uuid4()), "session_id": self.options.session_id}  # fmt: skip

    def _initialize(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            first, self._initialized = not self._initialized, True
        applied = False
        if first and self.channel is not None and request.get("hooks"):
            self.runtime.session.add_hooks(sdk_hooks(self.channel, request["hooks"]))
            applied = True
        if first and request.get("agents"):  # the program's agent types, beside the files' (theirs win a name)
            from agentteams import diagnostics
            from agentteams.settings.agents import program_agents

            defined, problems = program_agents(request["agents"])
            for problem in problems:
                diagnostics.warning("%s", problem)
            self.runtime.session.agents.agents.update({a.name: a for a in defined})
        if request.get("forwardSubagentText") is True and self.lines is not None:  # a subagent's text, attributed
            self.lines.subagents.forward_text = True
        return server_info(self.runtime.session, self.options) | {"hooks_applied": applied or not request.get("hooks")}
