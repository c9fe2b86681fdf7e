"""The pieces of MCP start-up without a server process: what the model is told of servers not ready, which servers
a hub counts as connecting or failed, a call's wait for one (woken when it connects, ended by MCP_TIMEOUT or an
interrupt), the first request's wait for every server (-p, stream-json) and the servers it gives up on, and the
first-turn notice staying put for a conversation."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from agentteams.agent.mcp_wait import FirstRequest, FirstWait, late_tool, notice
from agentteams.tools.mcp import hub as hub_module
from agentteams.tools.mcp.config import ServerConfig
from agentteams.tools.mcp.connection import Connection, RemoteTool
from agentteams.tools.mcp.hub import McpHub


def config(name: str) -> ServerConfig:
    return ServerConfig(name, "stdio", "flag", command="true")


def held_hub(*names: str) -> McpHub:
    """A hub whose connections the test sets by hand: `start` does nothing (as for a hub already started)."""
    hub = McpHub([config(n) for n in names], _closed=True)
    hub.conns = {n: Connection(config(n)) for n in names}
    return hub


def test_the_notice_names_the_servers_still_connecting_and_those_that_failed_with_their_reasons() -> None:
    assert notice([], []) is None
    said = notice(["slow", "db"], [("broken", 'spawn "x": ENOENT')])
    assert said is not None and said.startswith("<mcp-servers>\n") and said.endswith("\n</mcp-servers>")
    assert "These MCP servers are still connecting: slow, db." in said
    assert "the call waits for its server to finish connecting" in said
    assert "These MCP servers failed to connect" in said and '- broken: "spawn \\"x\\": ENOENT"' in said
    only_failed = notice([], [("broken", "gone")])
    assert only_failed is not None and "still connecting" not in only_failed


def test_servers_not_started_yet_count_as_connecting_and_a_switched_off_one_never() -> None:
    hub = McpHub([config("a"), config("b")], disabled=frozenset({"b"}))
    assert hub.connecting() == ["a"] and hub.failed() == []
    held = held_hub("a", "b", "c")
    held.conns["b"].status, held.conns["c"].status, held.conns["c"].error = "connected", "failed", "boom"
    assert held.connecting() == ["a"] and held.failed() == [("c", "boom")]
    held.conns["c"].dropped = True  # it stopped after it had run: started again on a call, not "failed to connect"
    assert held.failed() == []


def test_a_wait_ends_as_soon_as_the_server_connects() -> None:
    hub = held_hub("slow")
    conn = hub.conns["slow"]

    def connect() -> None:
        time.sleep(0.1)
        conn.status = "connected"
        hub._ready(conn)

    threading.Thread(target=connect).start()
    began = time.monotonic()
    assert hub.wait_connected("slow") is conn and conn.status == "connected"
    assert time.monotonic() - began < 5  # woken when it connected, not at MCP_TIMEOUT (30 s)


def test_a_wait_ends_at_mcp_timeout_or_on_an_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TIMEOUT", "200")
    monkeypatch.setattr(hub_module, "START_GRACE", 0.0)
    hub = held_hub("slow")
    began = time.monotonic()
    assert hub.wait_connected("slow") is hub.conns["slow"] and hub.conns["slow"].status == "pending"
    assert 0.19 < time.monotonic() - began < 5
    interrupt = threading.Event()
    interrupt.set()
    monkeypatch.setenv("MCP_TIMEOUT", "60000")
    began = time.monotonic()
    assert hub.wait_connected("slow", interrupt) is hub.conns["slow"]
    assert time.monotonic() - began < 1
    assert hub.wait_connected("nope") is None


def session_of(hub: McpHub, messages: list[dict[str, Any]], context: str | None = "MEMORY") -> Any:
    """What FirstRequest and late_tool use of a session: its agent (messages, tools, settings), context, interrupt."""
    agent = SimpleNamespace(messages=messages, tools={}, settings=SimpleNamespace(context=context))
    return SimpleNamespace(agent=agent, context=context, ctx=SimpleNamespace(interrupt=threading.Event()))


def test_the_notice_joins_the_first_requests_context_and_stays_for_the_conversation() -> None:
    hub = held_hub("slow")
    session = session_of(hub, [{"role": "user", "content": "go"}])
    first = FirstRequest(cast(Any, session), hub)
    first.note()
    said = session.agent.settings.context
    assert said.startswith("MEMORY\n\n<mcp-servers>") and "still connecting: slow." in said
    hub.conns["slow"].status = "connected"
    first.note()  # the same conversation's first request again (a retry): unchanged
    session.agent.messages += [{"role": "assistant", "content": "x"}, {"role": "user", "content": "more"}]
    first.note()
    assert session.agent.settings.context == said  # later requests: the prefix holds
    session.agent.messages[:] = [{"role": "user", "content": "after /clear"}]
    first.note()
    assert session.agent.settings.context == "MEMORY"  # a new conversation: nothing left to say


def test_a_call_of_a_failed_servers_tool_says_why_and_an_unrelated_name_is_left_alone() -> None:
    hub = held_hub("slow", "srv")
    hub.conns["slow"].status, hub.conns["slow"].error = "failed", "did not start within 2 s"
    hub.conns["srv"].status = "connected"
    session = session_of(hub, [])
    refreshed: list[int] = []
    said = late_tool(cast(Any, session), hub, lambda: refreshed.append(1), "mcp__slow__echo")
    assert (
        said
        == "MCP server 'slow' failed to connect: did not start within 2 s. Its tools are unavailable in this session."
    )
    assert late_tool(cast(Any, session), hub, lambda: None, "mcp__srv__echo") is None  # connected: not waited for
    assert late_tool(cast(Any, session), hub, lambda: None, "Bash") is None


def test_a_call_of_a_connecting_servers_tool_gets_the_tool_once_it_is_ready() -> None:
    hub = held_hub("slow")
    session = session_of(hub, [])
    conn, echo = hub.conns["slow"], RemoteTool("echo", "Say it back", {"type": "object"})
    tool = object()

    def connect() -> None:
        time.sleep(0.05)
        conn.tools, conn.status = [echo], "connected"
        hub._ready(conn)

    def refresh() -> None:  # what the agent's rebuild does: the ready tools join
        if conn.status == "connected":
            session.agent.tools["mcp__slow__echo"] = tool

    threading.Thread(target=connect).start()
    assert late_tool(cast(Any, session), hub, refresh, "mcp__slow__echo") is tool


def test_the_first_requests_wait_ends_when_every_server_has_connected_or_failed() -> None:
    hub = held_hub("a", "b")

    def settle() -> None:
        time.sleep(0.05)
        hub.conns["a"].status = "connected"
        hub._ready(hub.conns["a"])
        time.sleep(0.05)
        hub.conns["b"].status, hub.conns["b"].error = "failed", "boom"
        hub._lost(hub.conns["b"], "pending")

    hub.warn = lambda _line: None
    threading.Thread(target=settle).start()
    began = time.monotonic()
    FirstWait(hub, threading.Event())()
    assert time.monotonic() - began < 5  # woken as each settled, not at MCP_TIMEOUT (30 s)
    assert hub.failed() == [("b", "boom")] and hub.connecting() == []


def test_a_server_still_connecting_at_mcp_timeout_is_given_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TIMEOUT", "200")
    hub = held_hub("slow", "quick")
    hub.conns["quick"].status = "connected"
    wait = FirstWait(hub, threading.Event())
    began = time.monotonic()
    wait()
    assert 0.19 < time.monotonic() - began < 5
    assert hub.connecting() == [] and hub.failed() == [("slow", "did not start within 0.2 s")]
    assert hub.lines()[1].status == "failed" and hub.conns["quick"].status == "connected"
    began = time.monotonic()
    wait()  # the init line's caller after the agent's: nothing left to wait for
    assert time.monotonic() - began < 0.1


def test_an_interrupted_wait_gives_up_on_nothing() -> None:
    hub, interrupt = held_hub("slow"), threading.Event()
    interrupt.set()
    FirstWait(hub, interrupt)()
    assert hub.connecting() == ["slow"] and hub.failed() == []


def test_a_server_given_up_before_its_start_began_is_never_started() -> None:
    hub = McpHub([config("late")])
    hub.give_up(["late"], "did not start within 2 s")
    assert hub.connecting() == [] and hub.failed() == [("late", "did not start within 2 s")]
    hub.start()
    try:
        assert hub.conns["late"].status == "failed" and "late" not in hub._tasks
    finally:
        hub.close()


def test_a_server_given_up_while_the_loop_is_busy_is_failed_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # the loop (importing the SDK, starting a server) runs nothing past CLOSE_WAIT: its mark comes later, and the first
    # request, made as give_up returns, must already say the server failed (CI under load said "still connecting")
    monkeypatch.setattr(hub_module, "CLOSE_WAIT", 0.05)
    hub = held_hub("slow")
    hub._loop = cast(Any, SimpleNamespace(submit=lambda job: (job.close(), concurrent.futures.Future())[1]))
    hub.give_up(["slow"], "did not start within 2 s")
    assert hub.conns["slow"].status == "pending"  # not marked yet
    assert hub.connecting() == [] and hub.failed() == [("slow", "did not start within 2 s")]
    assert hub.lines()[0].status == "failed" and hub.lines()[0].detail == "did not start within 2 s"
