"""One MCP server's connection through the `mcp` SDK: start it (a stdio subprocess, a streamable HTTP or SSE session,
or a driving program's own server reached through it), list its tools, watch it while it lives, call its tools; runs on
the hub's event loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Literal

from agentteams.settings.keyhelper import without_secrets
from agentteams.tools.mcp import program_servers, sdk_logs
from agentteams.tools.mcp.config import ServerConfig

Status = Literal["pending", "connected", "failed"]
WATCH_EVERY = 1.0  # seconds between liveness pings: a server that dies between calls is noticed and said at once


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False  # the server's readOnlyHint: such calls may run side by side


@dataclass
class CallOutcome:
    text: str
    is_error: bool = False
    lost: bool = False  # the connection is gone: the server stopped
    blocks: list[dict[str, Any]] | None = None  # what the model is given instead of `text` (result_blocks)


@dataclass
class Connection:
    """A server's state as /mcp shows it, and its live session while connected."""

    config: ServerConfig
    status: Status = "pending"
    error: str = ""
    tools: list[RemoteTool] = field(default_factory=list)
    session: Any = None  # the SDK's ClientSession, touched on the loop's thread only
    dropped: bool = False  # it stopped after it had been connected (a crash, not a failed start)
    closing: asyncio.Event | None = None

    async def serve(self, startup_timeout: float, on_ready: Any, on_lost: Any) -> None:
        """Connect, list the tools (`on_ready`), then watch until closed; a server that dies calls `on_lost`."""
        import anyio

        self.closing = asyncio.Event()
        sdk_logs.install()  # the SDK's logs of a misbehaving server: one warning line, not a traceback per line
        sdk_logs.serving.set(self.config.name)  # this task's context, which the SDK's reader tasks copy
        try:
            async with contextlib.AsyncExitStack() as stack:
                session = await self._open(stack)
                with anyio.fail_after(startup_timeout):
                    await session.initialize()
                    listed = await session.list_tools()
                self.tools = [_remote(t) for t in listed.tools]
                self.session, self.status = session, "connected"
                on_ready(self)
                await self._watch(session, on_lost)
        except Exception as e:  # anything a server does wrong is its failure, never the session's
            self._failed(_reason(e, startup_timeout), on_lost)
        finally:
            self.session = None

    async def _open(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp import ClientSession

        if self.config.transport == "sdk":
            read, write = await stack.enter_async_context(_through_program(self.config.name))
        elif self.config.transport == "stdio":
            from mcp import StdioServerParameters, stdio_client

            env = without_secrets(os.environ) | dict(self.config.env)
            params = StdioServerParameters(command=self.config.command, args=list(self.config.args), env=env)
            devnull = stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115 (closed by the stack)
            read, write = await stack.enter_async_context(stdio_client(params, errlog=devnull))
        elif self.config.transport == "sse":
            from mcp.client.sse import sse_client

            read, write = await stack.enter_async_context(
                sse_client(self.config.url, headers=dict(self.config.headers))
            )
        else:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await stack.enter_async_context(create_mcp_http_client(headers=dict(self.config.headers)))
            read, write, *_ = await stack.enter_async_context(streamable_http_client(self.config.url, http_client=http))
        return await stack.enter_async_context(ClientSession(read, write))

    async def _watch(self, session: Any, on_lost: Any) -> None:
        assert self.closing is not None
        if self.config.transport == "sdk":  # lives as long as the program that runs it: nothing to ping
            await self.closing.wait()
            return
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.closing.wait(), WATCH_EVERY)
                return
            try:
                await asyncio.wait_for(session.send_ping(), 30.0)
            except TimeoutError:
                continue  # busy, not gone
            except Exception as e:
                self._failed(_reason(e, 0), on_lost)
                return

    def _failed(self, reason: str, on_lost: Any) -> None:
        was = self.status
        if was == "failed" or (self.closing is not None and self.closing.is_set()):
            return
        self.status, self.error = "failed", reason
        on_lost(self, was)

    async def call(self, tool: str, args: dict[str, Any], timeout: float, on_lost: Any) -> CallOutcome:
        session = self.session
        if session is None or self.status != "connected":
            return CallOutcome(f"MCP server {self.config.name!r} is not available ({self.error or self.status})",
                               is_error=True)  # fmt: skip
        try:
            result = await session.call_tool(tool, args, read_timeout_seconds=timeout)
        except Exception as e:
            if "closed" in str(e).lower() or isinstance(e, (OSError, EOFError)):
                self._failed(_reason(e, 0), on_lost)
                return CallOutcome(f"MCP server {self.config.name!r} stopped: {self.error}", True, lost=True)
            return CallOutcome(f"MCP error: {e}", is_error=True)
        return CallOutcome(result_text(result), bool(result.is_error), blocks=result_blocks(result))


@contextlib.asynccontextmanager
async def _through_program(name: str) -> Any:
    """The stream pair of a server the driving program runs: each message goes to the program as `mcp_message`
    (a blocking wait, on a worker thread), and each answer to a request comes back as the server's."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp.types import JSONRPCError, JSONRPCResponse

    relay = program_servers.relay()
    if relay is None:
        raise RuntimeError(program_servers.NO_PROGRAM)
    to_program, outgoing = anyio.create_memory_object_stream[Any](32)
    incoming, from_program = anyio.create_memory_object_stream[Any](32)

    async def pump() -> None:
        async for sent in outgoing:
            message = sent.message.model_dump(by_alias=True, mode="json", exclude_none=True)
            answer = await anyio.to_thread.run_sync(relay, name, message)
            if "id" in message and "method" in message and isinstance(answer, dict):  # a request's answer
                kind = JSONRPCError if "error" in answer else JSONRPCResponse
                await incoming.send(SessionMessage(kind.model_validate(answer)))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(pump)
        try:
            yield from_program, to_program
        finally:
            tasks.cancel_scope.cancel()


def _remote(tool: Any) -> RemoteTool:
    hints = tool.annotations
    read_only = bool(getattr(hints, "read_only_hint", None)) if hints is not None else False
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object", "properties": {}}
    return RemoteTool(tool.name, tool.description or "", schema, read_only)


def result_text(result: Any) -> str:
    """What the model sees of a tool's result: its structured content as compact JSON when it has some (what
    Claude Code 2.1.330 sends), else its text blocks and a line for anything else."""
    if result.structured_content is not None and not result.is_error:
        return json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
    parts: list[str] = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource" and hasattr(block.resource, "text"):
            parts.append(block.resource.text)
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    return "\n".join(parts)


def result_blocks(result: Any) -> list[dict[str, Any]] | None:
    """A successful result without structured content goes to the model as its content blocks, as Claude Code 2.1.332
    sends them (text and images; anything else as a line saying what it was); None: `result_text` is sent."""
    if result.structured_content is not None or result.is_error:
        return None
    blocks: list[dict[str, Any]] = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            blocks.append({"type": "text", "text": block.text})
        elif kind == "image":
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": block.mime_type,
                                                       "data": block.data}})  # fmt: skip
        elif kind == "resource" and hasattr(block.resource, "text"):
            blocks.append({"type": "text", "text": block.resource.text})
        else:
            blocks.append({"type": "text", "text": f"[{kind or 'unknown'} content]"})
    return blocks


def _reason(e: BaseException, timeout: float) -> str:
    """One line: what went wrong, without a traceback (an exception group is told by its first member)."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    if isinstance(e, TimeoutError) and timeout:
        return f"did not start within {timeout:g} s"
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 200 else text[:197] + "..."
