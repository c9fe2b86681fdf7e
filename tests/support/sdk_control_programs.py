"""SDK programs that drive a session with the client's control requests (MCP servers switched, set and reconnected,
the context's usage, a background command stopped), each reporting what its author can observe; run against ours
and the real `claude` (tests/interop/test_interop_sdk.py) and against ours alone (tests/run)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from claude_agent_sdk import (
    ClaudeSDKClient,
    SystemMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
)

from tests.support.sdk_programs import Where, _options, bash_turn, script

MCP_SERVER = Path(__file__).with_name("mcp_server.py")
STOP_WAIT = 10.0  # seconds the lines of a stopped command may take to come


def _server() -> dict[str, Any]:
    return {"type": "stdio", "command": sys.executable, "args": [str(MCP_SERVER)]}


async def _error(call: Awaitable[Any]) -> str:
    """The error the CLI answered a request with ("" when it succeeded)."""
    try:
        await call
    except Exception as e:
        return str(e)
    return ""


async def _turn(client: ClaudeSDKClient, prompt: str) -> list[str]:
    """One turn: the MCP tools its init line says are offered."""
    await client.query(prompt)
    offered: list[str] = []
    async for m in client.receive_response():
        if isinstance(m, SystemMessage) and m.subtype == "init":
            offered = sorted(t for t in m.data.get("tools", []) if t.startswith("mcp__"))
    return offered


async def mcp_servers_switched(where: Where) -> dict[str, Any]:
    """A server switched off (its tools gone from the next turn) and on, reconnected, a second one set by the
    program and then taken away; the errors for a switched-off and an unknown server."""
    record: dict[str, Any] = {}
    async with ClaudeSDKClient(options=_options(where, mcp_servers={"one": _server()})) as client:

        async def states() -> list[tuple[str, str]]:
            return sorted((s["name"], s["status"]) for s in (await client.get_mcp_status())["mcpServers"])

        record["start"] = await states()
        await client.toggle_mcp_server("one", False)
        record["off"], record["offered_off"] = await states(), await _turn(client, "a")
        record["reconnect_off"] = await _error(client.reconnect_mcp_server("one"))
        await client.toggle_mcp_server("one", True)
        record["reconnect_on"] = await _error(client.reconnect_mcp_server("one"))
        # the Python SDK has no method for it (the TypeScript one has setMcpServers): the request as it sends it
        ask = client._query._send_control_request  # type: ignore[union-attr]
        record["set"] = await ask({"subtype": "mcp_set_servers", "servers": {"two": _server()}})
        record["both"], record["offered_both"] = await states(), await _turn(client, "b")
        record["unset"] = await ask({"subtype": "mcp_set_servers", "servers": {}})
        record["after"] = await states()
        record["unknown"] = await _error(client.toggle_mcp_server("nope", True))
    return record


def _shape(usage: dict[str, Any]) -> dict[str, Any]:
    used = sum(c["tokens"] for c in usage["categories"] if c.get("kind") == "used")
    buffer = sum(c["tokens"] for c in usage["categories"] if c.get("kind") == "buffer")
    free = sum(c["tokens"] for c in usage["categories"] if c.get("kind") == "free")
    required = ("categories", "totalTokens", "maxTokens", "rawMaxTokens", "percentage", "model", "isAutoCompactEnabled",
                "memoryFiles", "mcpTools", "agents", "gridRows", "autoCompactThreshold", "apiUsage")  # fmt: skip
    # a system prompt of its own: the SDK sends --system-prompt "", which leaves claude's empty, ours not
    ids = ("system_tools", "messages", "autocompact_buffer", "free_space")
    return {"keys": [k for k in required if k in usage], "max": usage["maxTokens"], "model": usage["model"],
            "auto": usage["isAutoCompactEnabled"], "grid": [len(usage["gridRows"]), len(usage["gridRows"][0])],
            "ids": [c["id"] for c in usage["categories"] if c["id"] in ids],
            "total_is_used": used == usage["totalTokens"], "adds_up": used + buffer + free == usage["maxTokens"],
            "threshold_below_max": 0 < usage["autoCompactThreshold"] < usage["maxTokens"]}  # fmt: skip


async def context_usage(where: Where) -> dict[str, Any]:
    """The context's usage before and after a turn: its parts add up to the model's window, and the turn's messages
    make it grow."""
    async with ClaudeSDKClient(options=_options(where)) as client:
        # as plain dicts: the SDK's TypedDict leaves out keys both CLIs send (a category's id and kind, apiUsage)
        before: dict[str, Any] = dict(await client.get_context_usage())
        await _turn(client, "hi")
        after: dict[str, Any] = dict(await client.get_context_usage())
    messages = [next(c["tokens"] for c in u["categories"] if c["id"] == "messages") for u in (before, after)]
    return {"before": _shape(before), "after": _shape(after), "grew": after["totalTokens"] > before["totalTokens"],
            "messages_grew": messages[1] > messages[0], "api_usage": [before["apiUsage"] is None,
                                                                     isinstance(after["apiUsage"], dict)]}  # fmt: skip


async def stop_a_background_command(where: Where) -> dict[str, Any]:
    """A command the model put in the background, stopped by the program by its task id: it never finishes, and the
    program hears it was killed; an unknown id is no error."""
    record: dict[str, Any] = {}
    options = _options(where, permission_mode="bypassPermissions")
    async with ClaudeSDKClient(options=options) as client:
        await client.query("go")
        started: list[TaskStartedMessage] = []
        async for m in client.receive_response():
            if isinstance(m, TaskStartedMessage):
                started.append(m)
        record["started"] = [(m.task_type, m.description, m.tool_use_id) for m in started]
        await client.stop_task(started[0].task_id)
        heard: list[tuple[str, str]] = []
        with anyio.move_on_after(STOP_WAIT):
            async for m in client.receive_messages():
                if isinstance(m, TaskUpdatedMessage):
                    heard.append(("updated", str(m.data.get("patch", {}).get("status"))))
                if isinstance(m, TaskNotificationMessage):
                    heard.append(("notification", m.status))
                    break
        record["heard"] = heard
        record["unknown"] = await _error(client.stop_task("b-no-such-task"))
        await anyio.sleep(3)  # past the command's own end, had it run on
    record["files"] = sorted(p.name for p in where.cwd.iterdir() if not p.name.startswith("."))
    return record


async def rewind_without_checkpoints(where: Where) -> dict[str, Any]:
    """Files rewound to a prompt's checkpoint in a session that keeps none (the program did not enable checkpointing):
    the error the program gets."""
    async with ClaudeSDKClient(options=_options(where)) as client:
        await _turn(client, "hi")
        refused = await _error(client.rewind_files("00000000-0000-4000-8000-000000000000"))
    return {"rewind": refused}


def _background() -> dict[str, Any]:
    turn = bash_turn("sleep 2 && touch late.txt", "toolu_bg")
    turn["content"][0]["input"] |= {"description": "sleep then touch", "run_in_background": True}
    return turn


PROGRAMS: dict[str, Callable[[Where], Awaitable[dict[str, Any]]]] = {
    "MCP servers switched, set and reconnected": mcp_servers_switched,
    "the context's usage": context_usage,
    "a background command stopped": stop_a_background_command,
    "files rewound without checkpoints": rewind_without_checkpoints,
}
SCRIPTS: dict[str, dict[str, Any]] = {
    "MCP servers switched, set and reconnected": script("A1", "B1"),
    "the context's usage": script("HELLO"),
    "a background command stopped": script(_background(), "STARTED"),
    "files rewound without checkpoints": script("HELLO"),
}
