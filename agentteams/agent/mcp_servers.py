"""A session's MCP servers wired into its agent: found; started at once and waited for before the first request (-p,
stream-json, in-process teammates) or once it is on its way, never waited for (the REPL, pane teammates); their tools
offered after the built-ins once ready, hidden as rules, modes or types say; the ones not ready yet in mcp_wait."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentteams import diagnostics
from agentteams.agent.mcp_wait import IDLE_START, FirstRequest, FirstWait, Starter, late_tool
from agentteams.tools.mcp.config import McpFlags, discover

if TYPE_CHECKING:
    from agentteams.agent.session import Session
    from agentteams.tools.base import Tool
    from agentteams.tools.mcp.hub import McpHub

__all__ = ["McpFlags", "McpLink", "attach_mcp"]


@dataclass
class McpLink:
    """The session's hub (None: no server configured) and how to close it."""

    hub: McpHub | None = None
    session: Session | None = None  # whose agent a hub made later is wired into
    _refresh: Callable[[], None] | None = None
    _starter: Starter | None = None
    _first_wait: FirstWait | None = None

    def ensure_hub(self) -> McpHub:
        """The session's hub, made (empty, its tools offered like a configured one's) when it had none: a driving
        program may add servers to a session that started without any (`mcp_set_servers`)."""
        if self.hub is None:
            from agentteams.tools.mcp.hub import McpHub

            assert self.session is not None, "an McpLink made by attach_mcp"
            hub = McpHub([])
            self._refresh = _offer(self.session, hub, None, self.wait_ready)
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

    def start_now(self) -> None:
        """As Claude Code's -p and stream-json sessions: every server started now, side by side, and the first
        request held until each has connected or failed (or MCP_TIMEOUT has passed), so that it offers their tools; a
        failure is said by the init line, the request and /mcp, never on stderr (claude prints nothing)."""
        if self.hub is None or self._starter is None or self._first_wait is not None or self.session is None:
            return
        self.hub.warn = _quiet
        self._first_wait = FirstWait(self.hub, self.session.ctx.interrupt)
        self._starter.now()

    def wait_ready(self) -> None:
        """The first request's wait (`start_now`), once; then the agent's tools as the servers left them (a
        program's init line lists them). Nothing for a session that does not wait."""
        if self._first_wait is not None:
            self._first_wait()
            self.refresh()


def attach_mcp(session: Session) -> McpLink:
    """The session's servers and the agent's offer of their tools: -p and stream-json sessions (not interactive)
    start them now and wait for them; the REPL's lead and teammates start them once the first request is out (an
    in-process teammate is told to start now by its runtime)."""
    options = session.options
    found = discover(options.mcp, options.cwd, options.settings.merged)
    for problem in found.problems:
        diagnostics.warning("%s", problem)
    if not found.servers and not found.pending:
        return McpLink(session=session)
    from agentteams.tools.mcp.hub import McpHub

    hub = McpHub.from_found(found)
    waits_for_person = session.options.interactive and session.options.identity is None  # the REPL's lead
    starter = Starter(hub, IDLE_START if waits_for_person else None)  # teammates: their first request comes
    session.listen(starter.heard)
    link = McpLink(hub, session, None, starter)
    link._refresh = _offer(session, hub, starter, link.wait_ready)
    if not options.interactive:
        link.start_now()
    return link


def _quiet(line: str) -> None:
    diagnostics.debug("%s", line)  # -d shows it


def _offer(session: Session, hub: McpHub, starter: Starter | None, ready: Callable[[], None]) -> Callable[[], None]:
    """Before each model call: the first request's wait for the servers (`ready`, when the session waits); the
    hub's visible tools after the built-ins, rebuilt when its tools or the mode changed; the starter told (the first
    call lets the servers start); a new conversation's first request told which servers are not ready; a call of a
    connecting server's tool waits for it. The rebuild alone (`McpLink.refresh`)."""
    agent, builtins = session.agent, dict(session.agent.tools)
    seen, before, first = [-1, ""], agent.before_call, FirstRequest(session, hub)

    def refresh() -> None:  # on the agent's thread, between requests: its tool table is never changed under it
        mode = session.policy.mode
        if seen != [hub.version, mode]:
            seen[:] = [hub.version, mode]
            agent.tools = {**builtins, **{t.name: t for t in _visible(session, hub)}}

    def offer() -> None:
        if starter is not None:
            starter.request()
        ready()
        refresh()
        if before is not None:
            before()  # compaction first: a conversation it replaced is a new one
        first.note()

    agent.before_call = offer
    agent.late_tool = lambda name: late_tool(session, hub, refresh, name)
    return refresh


def _visible(session: Session, hub: McpHub) -> list[Tool]:
    """The servers' ready tools the model may be offered: not hidden by a bare deny rule (`mcp__srv`,
    `mcp__srv__tool`), by delegate mode (coordination only) or by a custom agent type's tool list."""
    policy, custom = session.policy, session.custom_type
    if policy.mode == "delegate" or not hub.remote_tools():  # none ready: the tools' module stays unimported
        return []
    from agentteams.tools.mcp.tool import hub_tools

    hidden = [r for r in policy.disallowed if r.pattern is None]
    return [
        t for t in hub_tools(hub)
        if not any(r.covers(t.name, t.kind, None, policy.cwd, deny=True) for r in hidden)
        and (custom is None or custom.allows(t.name))
    ]  # fmt: skip
