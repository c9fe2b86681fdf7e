"""The MCP servers a driving program runs in its own process (an Agent SDK's `type: "sdk"` servers): how their
JSON-RPC messages reach it. One relay per process, set by the session a program drives (run/sdk); none elsewhere."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

Relay = Callable[[str, dict[str, Any]], dict[str, Any] | None]  # (server name, message) -> its answer, if any
NO_PROGRAM = "an in-process SDK server (type sdk) needs the program that drives this session (an Agent SDK)"

_relay: list[Relay] = []
_lock = threading.Lock()


def set_relay(relay: Relay) -> None:
    with _lock:
        _relay[:] = [relay]


def relay() -> Relay | None:
    with _lock:
        return _relay[0] if _relay else None
