"""Hook runs as stream-json lines (`system` `hook_started` / `hook_response`), as Claude Code 2.1.332 prints them: a
SessionStart hook's always, every other hook's with `--include-hook-events`."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

ALWAYS = ("SessionStart",)  # 2.1.332 prints these without the flag too


def start(options: Any, emit: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
    """From now on the session's hook runs go out as lines through `emit` (another session's in this process, an
    in-process teammate's, do not); the call that stops them. Started before the session is built: SessionStart runs
    then."""
    from agentteams.agent.hooks.runner import observe

    def observer(session_id: str, line: dict[str, Any]) -> None:
        if session_id == options.session_id and (options.hook_events or line["hook_event"] in ALWAYS):
            emit({**line, "uuid": str(uuid.uuid4()), "session_id": session_id})

    return observe(observer)
