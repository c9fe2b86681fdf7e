"""A test MCP server written with the `mcp` SDK, run as a real process: stdio, or streamable HTTP with `--http PORT`.

Tools: `echo` (read-only), `write` (writes a file), `die` (the process exits: a server crashing mid-session).
`--delay S` waits before serving (`--started FILE` written first); `--gate FILE` waits (up to 120 s) until the test
creates FILE: a server that is still connecting for as long as a test needs; `--ready DIR` gets `ready-<pid>` once
listed.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer


class Server(MCPServer):
    ready: Path | None = None

    async def list_tools(self) -> Any:
        tools = await super().list_tools()
        if self.ready is not None:
            (self.ready / f"ready-{os.getpid()}").write_text("listed")
        return tools


app = Server("testsrv")


@app.tool(annotations={"readOnlyHint": True})  # type: ignore[arg-type]
def echo(text: str) -> str:
    """Say the text back, with the server's pid."""
    return f"echo: {text} (pid {os.getpid()})"


@app.tool()
def write(path: str, text: str) -> str:
    """Write text to a file."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {path}"


@app.tool()
def die() -> str:
    """End the server process at once."""
    os._exit(3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--ready", default="")
    parser.add_argument("--started", default="")  # a file written first thing, before the delay
    parser.add_argument("--gate", default="")
    args = parser.parse_args()
    if args.started:
        Path(args.started).write_text(str(os.getpid()))
    time.sleep(args.delay)  # a slow start (-p waits for it, the REPL does not)
    deadline = time.monotonic() + 120
    while args.gate and not Path(args.gate).exists() and time.monotonic() < deadline:
        time.sleep(0.02)  # the test opens the gate once it has seen what it waits for
    app.ready = Path(args.ready) if args.ready else None  # each process its own file: a lead's and a teammate's
    if args.http:
        app.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        app.run()


if __name__ == "__main__":
    main()
