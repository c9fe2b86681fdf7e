"""The answers to an SDK program's control requests: `initialize` (its hooks registered once, the session described),
`interrupt`, `set_model`, `set_permission_mode`, `mcp_status`; any other subtype is an error reply naming it (never
ignored: the program would wait for an answer)."""

from __future__ import annotations

import os
import threading
from typing import Any

from agentteams import CLAUDE_CODE_COMPAT, __version__
from agentteams.agent.permissions.policy import parse_mode
from agentteams.errors import AgentTeamsError
from agentteams.run import headless
from agentteams.run.sdk.asks import sdk_hooks
from agentteams.run.sdk.channel import ControlChannel

MODELS = (("default", "Default (recommended)"), ("sonnet", "Sonnet"), ("opus", "Opus"), ("haiku", "Haiku"))


class Unsupported(AgentTeamsError):
    """A control request subtype this CLI does not answer."""


class ControlAnswers:
    """Answers for one session's program (`answer` is the channel's handler); `initialize` registers the program's
    hooks on its first call only."""

    def __init__(self, runtime: Any, options: Any) -> None:
        self.runtime, self.options = runtime, options
        self.channel: ControlChannel | None = None  # set once the channel exists (it needs this to answer)
        self._initialized = False
        self._lock = threading.Lock()

    def answer(self, obj: dict[str, Any]) -> dict[str, Any]:
        request: dict[str, Any] = obj["request"] if isinstance(obj.get("request"), dict) else {}
        subtype = request.get("subtype")
        reply: dict[str, Any] = {"request_id": obj.get("request_id")}
        try:
            body = self._answer(str(subtype), request)
        except AgentTeamsError as e:
            error = {"subtype": "error", "error": str(e)}
            return {"type": "control_response", "response": reply | error}
        return {"type": "control_response", "response": reply | {"subtype": "success", "response": body}}

    def _answer(self, subtype: str, request: dict[str, Any]) -> dict[str, Any]:
        session = self.runtime.session
        if subtype == "initialize":
            return self._initialize(request)
        if subtype == "interrupt":
            self.runtime.interrupt()
            return {}
        if subtype == "set_model":
            session.set_model(str(request.get("model") or self.options.model))
            return {}
        if subtype == "set_permission_mode":
            session.policy.mode = parse_mode(str(request.get("mode")))
            return {}
        if subtype == "mcp_status":
            return {"mcpServers": headless.mcp_servers(session)}
        raise Unsupported(f"Unsupported control request subtype: {subtype}")

    def _initialize(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            first, self._initialized = not self._initialized, True
        applied = False
        if first and self.channel is not None and request.get("hooks"):
            self.runtime.session.add_hooks(sdk_hooks(self.channel, request["hooks"]))
            applied = True
        return describe(self.runtime.session, self.options) | {"hooks_applied": applied or not request.get("hooks")}


def describe(session: Any, options: Any) -> dict[str, Any]:
    """The session as `initialize`'s answer describes it: its commands, agents, models, account and mode."""
    from agentteams.settings.agents import load_agents
    from agentteams.settings.commands import load_commands
    from agentteams.store.paths import config_root

    commands = load_commands(options.cwd, config_root())
    agents = load_agents(options.cwd, config_root())
    key_source = "ANTHROPIC_API_KEY" if os.environ.get("ANTHROPIC_API_KEY") else "none"
    return {
        "commands": [{"name": c.name, "description": c.description or "", "argumentHint": c.argument_hint or ""}
                     for c in commands.commands.values()],
        "agents": [{"name": a.name, "description": a.description} for a in agents.agents.values()],
        "output_style": "default", "available_output_styles": ["default"],
        "models": [{"value": value, "displayName": shown, "description": shown} for value, shown in MODELS],
        "account": {"tokenSource": "none", "apiKeySource": key_source, "apiProvider": "firstParty"},
        "pid": os.getpid(), "claude_code_version": CLAUDE_CODE_COMPAT, "agentteams_version": __version__,
        "current_permission_mode": session.policy.mode, "hook_on_failure_supported": True, "session_state": "idle",
        "capabilities": [],
    }  # fmt: skip
