"""A driven session's background commands as Claude Code tells a program of them: `task_started` when one starts
(its id is what `stop_task` names), `task_updated` and `task_notification` when the program stops it."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from agentteams.run.task_output import write_task_output


@dataclass
class BackgroundTasks:
    """The background commands started in this session: their description and the tool call that started each."""

    session_id: Any  # () -> the session id now (a fork changes it)
    _started: dict[str, tuple[str, str]] = field(default_factory=dict)  # task id -> (description, tool_use_id)

    def started(self, event: Any) -> list[dict[str, Any]]:
        """A `tool_end` event that put a command in the background: its `task_started` line (else none)."""
        data = event.result.data if event.kind == "tool_end" and event.result is not None else None
        task_id = data.get("background_id") if isinstance(data, dict) else None
        if not isinstance(task_id, str):
            return []
        description = str(event.input.get("description") or event.input.get("command") or "")
        self._started[task_id] = (description, event.tool_use_id)
        return [{"type": "system", "subtype": "task_started", "task_id": task_id, "tool_use_id": event.tool_use_id,
                 "description": description, "is_backgrounded": True, "task_type": "local_bash",
                 "uuid": str(uuid.uuid4()), "session_id": self.session_id()}]  # fmt: skip

    def stopped(self, task_id: str, command: str, output: str) -> list[dict[str, Any]]:
        """The lines of a command the program stopped: its status patched to killed, then the notice of its end
        with the file its output was left in (as Claude Code writes each command's output to one)."""
        description, use_id = self._started.get(task_id, (command, None))
        sid = self.session_id()
        out = write_task_output(str(sid), task_id, output)
        return [{"type": "system", "subtype": "task_updated", "task_id": task_id,
                 "patch": {"status": "killed", "end_time": int(time.time() * 1000)}, "uuid": str(uuid.uuid4()),
                 "session_id": sid},
                {"type": "system", "subtype": "task_notification", "task_id": task_id, "tool_use_id": use_id,
                 "status": "stopped", "output_file": str(out), "summary": description, "uuid": str(uuid.uuid4()),
                 "session_id": sid}]  # fmt: skip
