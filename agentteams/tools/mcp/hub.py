"""A session's MCP servers: all started at once on an event-loop thread, off the first prompt's path; their tools
as they become ready (sorted, so the request prefix stays put); calls with deadlines; /mcp's lines; closing."""

from __future__ import annotations

import atexit
import concurrent.futures
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentteams import diagnostics
from agentteams.tools.mcp.config import Found, Pending, ServerConfig
from agentteams.tools.mcp.connection import CallOutcome, Connection, RemoteTool
from agentteams.tools.mcp.loopthread import LoopThread

DEFAULT_STARTUP = 30.0  # seconds a server has to start and list its tools (MCP_TIMEOUT, ms, as Claude Code's)
DEFAULT_CALL = 600.0  # seconds one tool call may take (MCP_TOOL_TIMEOUT, ms)
POLL = 0.05  # seconds between looks at the interrupt flag while a call runs
CLOSE_WAIT = 5.0


def _seconds(var: str, default: float) -> float:
    try:
        return max(0.1, float(os.environ[var]) / 1000)
    except (KeyError, ValueError):
        return default


@dataclass(frozen=True)
class ServerLine:
    """One row of /mcp."""

    name: str
    status: str  # pending | connected | failed | needs approval | rejected
    transport: str
    origin: str
    tools: int = 0
    detail: str = ""


@dataclass
class McpHub:
    """Owns the connections; `tools_ready()` is read before each model request."""

    servers: Sequence[ServerConfig]
    pending: Sequence[Pending] = ()
    warn: Callable[[str], None] = field(default=lambda line: diagnostics.warning("%s", line))
    conns: dict[str, Connection] = field(default_factory=dict)
    _loop: LoopThread | None = None
    _tasks: dict[str, concurrent.futures.Future[None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _version: int = 0  # bumped when a server's tools change: the agent rebuilds its list only then
    _closed: bool = False

    @classmethod
    def from_found(cls, found: Found) -> McpHub:
        return cls(found.servers, found.pending)

    def start(self) -> McpHub:
        """Start every server concurrently and return at once: nothing here waits for a server. Once only, and
        never after `close`."""
        with self._lock:
            if not self.servers or self._loop is not None or self._closed:
                return self
            loop, startup = LoopThread(name="mcp"), _seconds("MCP_TIMEOUT", DEFAULT_STARTUP)
            conns = {config.name: Connection(config) for config in self.servers}
            self.conns = conns  # one assignment: readers on other threads see all of them or none
            for name, conn in conns.items():
                self._tasks[name] = loop.submit(conn.serve(startup, self._ready, self._lost))
            self._loop = loop
        atexit.register(self.close)
        return self

    def _ready(self, conn: Connection) -> None:
        with self._lock:
            self._version += 1

    def _lost(self, conn: Connection, was: str) -> None:
        """One clear line; the server's tools stay listed (the prompt's prefix holds) and answer with errors."""
        name = conn.config.name
        if was == "connected":
            conn.dropped = True
            self.warn(f"MCP server {name!r} stopped: {conn.error}; it is started again when one of its tools is called")
        else:
            self.warn(f"MCP server {name!r} failed to start: {conn.error}")
        with self._lock:
            self._version += 1

    @property
    def version(self) -> int:
        return self._version

    def remote_tools(self) -> list[tuple[str, RemoteTool]]:
        """(server, tool) of every server that listed its tools, in a stable order: by server, then tool."""
        found = [(name, t) for name, c in self.conns.items() if c.tools for t in c.tools]
        return sorted(found, key=lambda st: (st[0], st[1].name))

    def call(
        self, server: str, tool: str, args: dict[str, Any], interrupt: threading.Event | None = None
    ) -> CallOutcome:
        """Call a tool and wait for its answer (a deadline, and an interrupt ends the wait)."""
        conn = self.conns.get(server)
        if conn is None or self._loop is None:
            return CallOutcome(f"MCP server {server!r} is not configured", is_error=True)
        if conn.status == "failed" and conn.dropped:  # it stopped after it had run: started again, as Claude Code
            conn = self._restart(conn, interrupt)
        timeout = _seconds("MCP_TOOL_TIMEOUT", DEFAULT_CALL)
        future = self._loop.submit(conn.call(tool, args, timeout, self._lost))
        waited = 0.0
        while True:
            try:
                return future.result(timeout=POLL)
            except concurrent.futures.TimeoutError:
                waited += POLL
            if (interrupt is not None and interrupt.is_set()) or waited > timeout + 5:
                future.cancel()
                why = "interrupted by the user" if interrupt is not None and interrupt.is_set() else "timed out"
                return CallOutcome(f"MCP tool {tool} on {server!r}: {why}", is_error=True)

    def _restart(self, old: Connection, interrupt: threading.Event | None) -> Connection:
        """A new connection in place of one that dropped, waited for (this call needs it) up to the start timeout."""
        assert self._loop is not None
        name, startup = old.config.name, _seconds("MCP_TIMEOUT", DEFAULT_STARTUP)
        with self._lock:
            conn = self.conns[name]
            if conn is old:  # not already restarted by a call beside this one
                conn = self.conns[name] = Connection(old.config)
                self._tasks[name] = self._loop.submit(conn.serve(startup, self._ready, self._lost))
        pause = threading.Event()
        for _ in range(int(startup / POLL) + 1):
            if conn.status != "pending" or (interrupt is not None and interrupt.is_set()):
                break
            pause.wait(POLL)
        return conn

    def wait_settled(self, timeout: float) -> bool:
        """Until every server is connected or failed (tests and `/mcp` may wait; the agent never does)."""
        pause = threading.Event()
        for _ in range(int(timeout / POLL) + 1):
            if all(c.status != "pending" for c in self.conns.values()):
                return True
            pause.wait(POLL)
        return False

    def lines(self) -> list[ServerLine]:
        rows = []
        for config in self.servers:
            conn = self.conns.get(config.name) or Connection(config)
            rows.append(
                ServerLine(config.name, conn.status, config.transport, config.origin, len(conn.tools), conn.error)
            )
        for p in self.pending:  # "needs approval: how to give it", or "rejected (...)"
            status, _, how = p.why.partition(": ")
            rows.append(ServerLine(p.name, status, "-", "project", detail=how))
        return sorted(rows, key=lambda r: r.name)

    def close(self) -> None:
        """Close every connection (stdio servers end with it), then the loop; safe to call twice."""
        with self._lock:
            loop, self._loop, self._closed = self._loop, None, True
        if loop is None:
            return
        atexit.unregister(self.close)
        waits = []
        for name, conn in self.conns.items():
            if conn.status == "pending" or conn.closing is None:  # still starting: cancelled, not waited for (its
                self._tasks[name].cancel()  # stdin closes with us at the latest, and a stdio server ends on that)
            else:
                loop.call(conn.closing.set)
                waits.append(self._tasks[name])
        _, left = concurrent.futures.wait(waits, timeout=CLOSE_WAIT)
        if not left and len(waits) == len(self._tasks):
            loop.stop()  # else the loop goes on finishing the cancelled ones (a daemon thread: never holds up an exit)


def describe(lines: list[ServerLine]) -> str:
    """/mcp's text: one line a server."""
    if not lines:
        return "No MCP servers configured. Use --mcp-config, .mcp.json or mcpServers in settings."
    out = ["MCP servers:"]
    for r in lines:
        tools = f", {r.tools} tool{'s' if r.tools != 1 else ''}" if r.status == "connected" else ""
        detail = f": {r.detail}" if r.detail and r.status != "connected" else ""
        out.append(f"  {r.name} ({r.transport}, {r.origin}) {r.status}{tools}{detail}")
    return "\n".join(out)
