"""A session's MCP servers wired into its agent: found, started once the first request is on its way (never waited
for), their tools put after the built-ins before each request once ready, hidden as rules, modes or types say."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentteams import diagnostics
from agentteams.tools.mcp.config import McpFlags, discover

if TYPE_CHECKING:
    from agentteams.agent.session import Session
    from agentteams.tools.base import Tool
    from agentteams.tools.mcp.hub import McpHub

__all__ = ["McpFlags", "McpLink", "attach_mcp"]
IDLE_START = 1.0  # seconds: a REPL with no model call by then (waiting for its person) starts them anyway
FIRST_ANSWER_WAIT = 10.0  # seconds the start waits for the first answer to begin, at most


@dataclass
class McpLink:
    """The session's hub (None: no server configured) and how to close it."""

    hub: McpHub | None = None
    session: Session | None = None  # whose agent a hub made later is wired into
    _refresh: Callable[[], None] | None = None

    def ensure_hub(self) -> McpHub:
        """The session's hub, made (empty, its tools offered like a configured one's) when it had none: a driving
        program may add servers to a session that started without any (`mcp_set_servers`)."""
        if self.hub is None:
            from agentteams.tools.mcp.hub import McpHub

            assert self.session is not None, "an McpLink made by attach_mcp"
            hub = McpHub([])
            self._refresh = _offer(self.session, hub, threading.Event())
            self.hub = hub
        return self.hub

    def refresh(self) -> None:
        """The agent's tool table as the servers are now, before a request would rebuild it (between turns only:
        a program's `init` line lists what the coming turn offers)."""
        if self._refresh is not None:
            self._refresh()

    def close(self) -> None:
        if self.hub is not None:
            self.hub.close()

    def start_now(self, timeout: float) -> None:
        """Start the servers now and wait (up to `timeout` s) until each has connected or failed: a session a program
        drives offers their tools from its first request, as claude does."""
        if self.hub is not None:
            self.hub.start()
            self.hub.wait_settled(timeout)


def attach_mcp(session: Session) -> McpLink:
    """Start the session's servers on their own thread and have the agent offer their tools as they come."""
    options = session.options
    found = discover(options.mcp, options.cwd, options.settings.merged)
    for problem in found.problems:
        diagnostics.warning("%s", problem)
    if not found.servers and not found.pending:
        return McpLink(session=session)
    from agentteams.tools.mcp.hub import McpHub

    hub = McpHub.from_found(found)
    return McpLink(hub, session, _offer(session, hub, _start_after_first_request(session, hub)))


def _offer(session: Session, hub: McpHub, began: threading.Event) -> Callable[[], None]:
    """Before each model call: the hub's visible tools after the built-ins, rebuilt when its tools or the mode
    changed; `began` set (the first call lets the servers start). Returns the rebuild alone (`McpLink.refresh`)."""
    agent, builtins = session.agent, dict(session.agent.tools)
    seen, before = [-1, ""], agent.before_call

    def refresh() -> None:  # on the agent's thread, between requests: its tool table is never changed under it
        mode = session.policy.mode
        if seen != [hub.version, mode]:
            seen[:] = [hub.version, mode]
            agent.tools = {**builtins, **{t.name: t for t in _visible(session, hub)}}

    def offer() -> None:
        began.set()
        refresh()
        if before is not None:
            before()

    agent.before_call = offer
    return refresh


def _start_after_first_request(session: Session, hub: McpHub) -> threading.Event:
    """Start the servers once the first request is through (its answer begins), not before: importing the SDK costs
    a second of CPU that would otherwise hold up that request; a REPL with no request coming: after IDLE_START."""
    began, answering = threading.Event(), threading.Event()
    session.listen(lambda e: answering.set() if e.kind in ("text", "assistant", "retry") else None)

    waits_for_person = session.options.interactive and session.options.identity is None  # the REPL's lead
    idle = IDLE_START if waits_for_person else None  # -p and teammates: their first request always comes

    def starter() -> None:
        if began.wait(idle):
            answering.wait(FIRST_ANSWER_WAIT)
        hub.start()

    threading.Thread(target=starter, name="mcp-start", daemon=True).start()
    return began  # set before each model call


def _visible(session: Session, hub: McpHub) -> list[Tool]:
    """The servers' ready tools the model may be offered: not hidden by a bare deny rule (`mcp__srv`,
    `mcp__srv__tool`), by delegate mode (coordination only) or by a custom agent type's tool list."""
    from agentteams.tools.mcp.tool import hub_tools

    policy, custom = session.policy, session.custom_type
    if policy.mode == "delegate":
        return []
    hidden = [r for r in policy.disallowed if r.pattern is None]
    return [
        t for t in hub_tools(hub)
        if not any(r.covers(t.name, t.kind, None, policy.cwd, deny=True) for r in hidden)
        and (custom is None or custom.allows(t.name))
    ]  # fmt: skip
