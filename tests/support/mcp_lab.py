"""MCP test servers for end-to-end tests: the config that starts tests/support/mcp_server.py (stdio) or one running
over streamable HTTP on a free port, and the scripted model's turn that waits for N servers to be ready."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.wait import wait_until

SERVER = Path(__file__).resolve().parent / "mcp_server.py"


def stdio_entry(ready: Path, *extra: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER), "--ready", str(ready), *extra]}


def config(name: str, entry: dict[str, Any]) -> str:
    return json.dumps({"mcpServers": {name: entry}})


def wait_ready_command(ready: Path, count: int = 1) -> str:
    """A Bash command the scripted model runs first: until `count` servers listed their tools (a bounded poll), then
    a moment for the client to take the list in (the tools are offered from the next request on)."""
    return (f"for i in $(seq 600); do [ $(ls {ready} | wc -l) -ge {count} ] && break; sleep 0.05; done; "
            f"ls {ready} | wc -l; sleep 0.5")  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def http_server(ready: Path) -> Iterator[int]:
    """The test server as a real process serving streamable HTTP on a free port; yields the port."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVER), "--http", str(port), "--ready", str(ready)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_until(lambda: _accepts(port) or proc.poll() is not None, 30, "the MCP HTTP server to listen")
        assert proc.poll() is None, "the MCP HTTP server exited"
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
