"""A session's MCP servers: all started at once on an event-loop thread (asyncio, the connections and the SDK are
imported only then); a wait for all of them and giving up on the late ones; their tools as they become ready (sorted,
so the request prefix stays put); calls with deadlines; /mcp's lines; closing."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.tools.mcp.config import Found, Pending, ServerConfig

if TYPE_CHECKING:  # imported where a server is started or called: a session's first request never pays for them
    import concurrent.futures

    from agentteams.tools.mcp.connection import CallOutcome, Connection, RemoteTool
    from agentteams.tools.mcp.loopthread import LoopThread

DEFAULT_STARTUP = 30.0  # seconds a server has to start and list its tools (MCP_TIMEOUT, ms, as Claude Code's)
DEFAULT_CALL = 600.0  # seconds one tool call may take (MCP_TOOL_TIMEOUT, ms)
POLL = 0.05  # seconds between looks at the interrupt flag while a call runs
CLOSE_WAIT = 5.0
# seconds past MCP_TIMEOUT a call may wait for a connecting server: its own MCP_TIMEOUT (counted once the SDK is
# imported and the server started, which a loaded machine may take seconds for) ends the wait first, with its reason
START_GRACE = 30.0


def _seconds(var: str, default: float) -> float:
    try:
        return max(0.1, float(os.environ[var]) / 1000)
    except (KeyError, ValueError):
        return default


def startup_timeout() -> float:
    """Seconds a server has to start (MCP_TIMEOUT, ms; 30 s by default)."""
    return _seconds("MCP_TIMEOUT", DEFAULT_STARTUP)


class McpControlError(AgentTeamsError):
    """A program's change to a server that cannot be made (no such server, or it is switched off)."""


@dataclass(frozen=True)
class ServerLine:
    """One row of /mcp."""

    name: str
    status: str  # pending | connected | failed | disabled | needs approval | rejected
    transport: str
    origin: str
    tools: int = 0
    detail: str = ""


@dataclass
class McpHub:
    """Owns the connections; `tools_ready()` is read before each model request."""

    servers: Sequence[ServerConfig]
    pending: Sequence[Pending] = ()
    disabled: frozenset[str] = frozenset()  # switched off by a driving program (`mcp_toggle`): no connection, no tools
    added: tuple[str, ...] = ()  # the servers a program set (`mcp_set_servers`), in order: the only ones it replaces
    warn: Callable[[str], None] = field(default=lambda line: diagnostics.warning("%s", line))
    conns: dict[str, Connection] = field(default_factory=dict)
    _loop: LoopThread | None = None
    _tasks: dict[str, concurrent.futures.Future[None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _changed: threading.Condition = field(init=False)  # on `_lock`: told when a server connects or fails
    _given_up: dict[str, str] = field(default_factory=dict)  # server: why (`give_up`), never started or connected
    _version: int = 0  # bumped when a server's tools change: the agent rebuilds its list only then
    _closed: bool = False

    def __post_init__(self) -> None:
        self._changed = threading.Condition(self._lock)

    @classmethod
    def from_found(cls, found: Found) -> McpHub:
        return cls(found.servers, found.pending)

    def start(self) -> McpHub:
        """Start every server concurrently and return at once: nothing here waits for a server. Once only, and
        never after `close`."""
        if not self.servers or self._loop is not None or self._closed:
            return self
        import importlib

        importlib.import_module("agentteams.tools.mcp.connection")  # its second of CPU, not under the lock: a
        with self._lock:  # wait for the servers looks at them meanwhile
            if self._loop is None and not self._closed:
                self._start_loop()
        return self

    def _start_loop(self) -> None:
        """The loop and a connection for each server not switched off (under the lock)."""
        from agentteams.tools.mcp.connection import Connection
        from agentteams.tools.mcp.loopthread import LoopThread

        loop, startup = LoopThread(name="mcp"), _seconds("MCP_TIMEOUT", DEFAULT_STARTUP)
        conns = {config.name: Connection(config) for config in self.servers if config.name not in self.disabled}
        for name, why in self._given_up.items():  # given up on before the loop was even running: never started
            if name in conns:
                conns[name].status, conns[name].error = "failed", why
        self.conns = conns  # one assignment: readers on other threads see all of them or none
        for name, conn in conns.items():
            if conn.status == "pending":
                self._tasks[name] = loop.submit(conn.serve(startup, self._ready, self._lost))
        self._loop = loop
        atexit.register(self.close)

    def _ready(self, conn: Connection) -> None:
        with self._lock:
            self._version += 1
            self._changed.notify_all()

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
            self._changed.notify_all()

    @property
    def version(self) -> int:
        return self._version

    def remote_tools(self) -> list[tuple[str, RemoteTool]]:
        """(server, tool) of every server that listed its tools, in a stable order: by server, then tool."""
        found = [(name, t) for name, c in self.conns.items() if c.tools and name not in self.disabled for t in c.tools]
        return sorted(found, key=lambda st: (st[0], st[1].name))

    def _state(self, conn: Connection) -> tuple[str, str]:
        """A connection's status and error, a pending one given up on failed at once: `give_up` returns before a busy
        loop has marked it (its first request would say it is still connecting)."""
        why = self._given_up.get(conn.config.name)
        return ("failed", why) if conn.status == "pending" and why is not None else (conn.status, conn.error)

    def connecting(self) -> list[str]:
        """The servers still connecting (or not started yet: the hub starts them once the first request is out)."""
        conns = self.conns
        return [c.name for c in self.servers if c.name not in self.disabled and c.name not in self._given_up
                and (c.name not in conns or conns[c.name].status == "pending")]  # fmt: skip

    def failed(self) -> list[tuple[str, str]]:
        """(server, why) of each server that failed to connect (not one that stopped after it had run)."""
        states = [(n, c, self._state(c)) for n, c in self.conns.items()]
        return [(n, why) for n, c, (status, why) in states if status == "failed" and not c.dropped]

    def wait_all(self, until: float, interrupt: threading.Event | None = None) -> list[str]:
        """Until every server has connected or failed, the monotonic clock reaches `until`, or the person
        interrupts; the servers still connecting then."""
        with self._changed:
            while self.connecting() and (left := until - time.monotonic()) > 0:
                if interrupt is not None and interrupt.is_set():
                    break
                self._changed.wait(min(POLL, left))  # woken at once by `_ready`/`_lost`; POLL: the interrupt
            return self.connecting()

    def give_up(self, names: Sequence[str], why: str) -> None:
        """These servers (still connecting) failed for good, as Claude Code gives up on a server its session waited
        for past MCP_TIMEOUT: their start is cancelled (a stdio server's process ends) and they never connect."""
        from agentteams.tools.mcp.connection import Connection

        with self._lock:
            self._given_up = {**self._given_up, **dict.fromkeys(names, why)}  # a new dict: read without the lock
            loop = self._loop
            if loop is None:  # its start still under way (importing the SDK): failed from now, never started
                configs = [c for c in self.servers if c.name in names]
                self.conns = {**self.conns, **{c.name: Connection(c, "failed", why) for c in configs}}
        if loop is not None:  # on the loop's thread: a connection cannot connect between the look and the mark
            marked = loop.submit(self._mark_given_up(dict.fromkeys(names, why)))
            with contextlib.suppress(TimeoutError):  # a loop that busy marks them soon after: not worth a failed turn
                marked.result(CLOSE_WAIT)
        with self._lock:
            self._version += 1
            self._changed.notify_all()

    async def _mark_given_up(self, whys: dict[str, str]) -> None:
        for name, why in whys.items():
            conn, task = self.conns.get(name), self._tasks.get(name)
            if conn is not None and conn.status == "pending":
                conn.status, conn.error = "failed", why
                if task is not None:
                    task.cancel()

    def wait_connected(self, server: str, interrupt: threading.Event | None = None) -> Connection | None:
        """A server still connecting, waited for (started first if the hub was not yet): until it has connected or
        failed, the person interrupts, or MCP_TIMEOUT (its own start's limit) has passed; None: no such server."""
        self.start()
        deadline = time.monotonic() + _seconds("MCP_TIMEOUT", DEFAULT_STARTUP) + START_GRACE
        with self._changed:
            while True:
                conn = self.conns.get(server)
                left = deadline - time.monotonic()
                if conn is None or conn.status != "pending" or left <= 0 or (interrupt and interrupt.is_set()):
                    return conn
                self._changed.wait(min(POLL, left))  # woken at once by `_ready`/`_lost`; POLL: the interrupt

    def call(
        self, server: str, tool: str, args: dict[str, Any], interrupt: threading.Event | None = None
    ) -> CallOutcome:
        """Call a tool and wait for its answer (a deadline, and an interrupt ends the wait)."""
        import concurrent.futures

        from agentteams.tools.mcp.connection import CallOutcome

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
        from agentteams.tools.mcp.connection import Connection

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

    # -- a driving program's changes (run/sdk/mcp_control.py): each waits for the servers it starts, as claude does

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Switch a server off (its connection closed, its tools no longer offered) or on again (started anew)."""
        with self._lock:
            config = self._config(name)
            self.disabled = self.disabled - {name} if enabled else self.disabled | {name}
            self._drop(name)
            if enabled:
                self._launch(config)
            self._version += 1
        if enabled:
            self._settle([name])

    def reconnect(self, name: str) -> Connection:
        """A new connection in place of the server's current one, waited for; the new connection."""
        with self._lock:
            config = self._config(name)
            if name in self.disabled:
                raise McpControlError(
                    f"MCP server {name} is disabled \u2014 enable it (mcp_toggle) before reconnecting"
                )
            self._drop(name)
            conn = self._launch(config)
            self._version += 1
        self._settle([name])
        return conn

    def replace_added(self, configs: Sequence[ServerConfig]) -> tuple[list[str], list[str]]:
        """The program's own set of servers becomes `configs` (the ones it set before and left out are closed;
        the session's configured servers stay): (names added, names removed), once the added ones settled."""
        wanted = {c.name: c for c in configs}
        with self._lock:
            if self._loop is None and not self._closed:
                self._start_loop()
            removed = [n for n in self.added if n not in wanted]
            fresh = [c for c in configs if c.name not in self.conns and c.name not in self.disabled]
            for name in removed:
                self._drop(name)
            self.servers = [s for s in self.servers if s.name not in removed] + fresh
            self.disabled = self.disabled - set(removed)
            self.added = (*(n for n in self.added if n not in removed), *(c.name for c in fresh))
            for config in fresh:
                self._launch(config)
            self._version += 1
        self._settle([c.name for c in fresh])
        return [c.name for c in fresh], removed

    def _config(self, name: str) -> ServerConfig:
        found = [c for c in self.servers if c.name == name]
        if not found:
            raise McpControlError(f"Server not found: {name}")
        return found[0]

    def _launch(self, config: ServerConfig) -> Connection:
        """Start one server's connection (under the lock, the loop running)."""
        if self._loop is None and not self._closed:
            self._start_loop()  # a hub not started yet: this starts all of its servers, this one among them
            if config.name in self.conns:
                return self.conns[config.name]
        if self._loop is None:
            raise McpControlError("the session's MCP servers are closed")
        from agentteams.tools.mcp.connection import Connection

        conn = Connection(config)
        self._given_up = {n: why for n, why in self._given_up.items() if n != config.name}  # started anew
        self.conns = {**self.conns, config.name: conn}  # a new dict: readers on other threads iterate the old one
        self._tasks[config.name] = self._loop.submit(
            conn.serve(_seconds("MCP_TIMEOUT", DEFAULT_STARTUP), self._ready, self._lost)
        )
        return conn

    def _drop(self, name: str) -> None:
        """Close one server's connection, if it has one (under the lock)."""
        conn, task = self.conns.get(name), self._tasks.pop(name, None)
        self.conns = {n: c for n, c in self.conns.items() if n != name}
        if conn is None or task is None or self._loop is None:
            return
        if conn.status == "pending" or conn.closing is None:
            task.cancel()
        else:
            self._loop.call(conn.closing.set)

    def _settle(self, names: list[str]) -> None:
        pause, startup = threading.Event(), _seconds("MCP_TIMEOUT", DEFAULT_STARTUP)
        for _ in range(int(startup / POLL) + 1):
            if all(c.status != "pending" for n, c in self.conns.items() if n in names):
                return
            pause.wait(POLL)

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
            conn = self.conns.get(config.name)  # none yet: pending, the hub starts it after the first request
            status, error = self._state(conn) if conn else ("pending", "")
            state = "disabled" if config.name in self.disabled else status
            tools = len(conn.tools) if conn else 0
            rows.append(ServerLine(config.name, state, config.transport, config.origin, tools, error))
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
        import concurrent.futures

        waits = []
        for name, conn in self.conns.items():
            task = self._tasks.get(name)
            if task is None:  # given up on before it was started
                continue
            if conn.status == "pending" or conn.closing is None:  # still starting: cancelled, not waited for (its
                task.cancel()  # stdin closes with us at the latest, and a stdio server ends on that)
            else:
                loop.call(conn.closing.set)
                waits.append(task)
        _, left = concurrent.futures.wait(waits, timeout=CLOSE_WAIT)
        if not left and len(waits) == len(self._tasks):
            loop.stop()  # else the loop goes on finishing the cancelled ones (a daemon thread: never holds up an exit)


def describe(lines: list[ServerLine]) -> str:
    """/mcp's text: one line a server."""
    if not lines:
        return "No MCP servers configured. Use `agentteams mcp add`, .mcp.json or --mcp-config."
    out = ["MCP servers:"]
    for r in lines:
        tools = f", {r.tools} tool{'s' if r.tools != 1 else ''}" if r.status == "connected" else ""
        detail = f": {r.detail}" if r.detail and r.status != "connected" else ""
        out.append(f"  {r.name} ({r.transport}, {r.origin}) {r.status}{tools}{detail}")
    return "\n".join(out)
