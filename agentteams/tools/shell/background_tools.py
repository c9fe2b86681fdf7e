"""Background shells as the model sees them: `Bash` with `run_in_background`, `BashOutput` (new output only) and
`KillShell`, with Claude Code's names and inputs (its newer TaskOutput / TaskStop still take these names)."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from agentteams.tools.base import Tool, ToolContext, ToolInputError, ToolResult
from agentteams.tools.shell.background import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, BackgroundShell
from agentteams.tools.shell.process import parse_timeout


def background_timeout(args: dict[str, Any]) -> int:
    """A background command's time limit in ms: Claude Code's default and maximum for one."""
    return parse_timeout(args, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)


def start_background(command: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Bash's `run_in_background`: start the command and answer at once with its id."""
    timeout_ms = background_timeout(args)
    try:
        shell = ctx.shells.start(command, ctx.cwd, timeout_ms)
    except OSError as exc:
        return ToolResult.error(f"Could not start bash: {exc}")
    text = (
        f"Command running in background with ID: {shell.id}. It keeps running across turns (stopped after "
        f"{timeout_ms // 1000} s). Read its new output with BashOutput (bash_id {shell.id}); stop it with KillShell."
    )
    return ToolResult(text, data={"background_id": shell.id})


def _shell_of(args: dict[str, Any], ctx: ToolContext, key: str) -> BackgroundShell:
    shell_id = args.get(key) or args.get("task_id")  # task_id: the name Claude Code's newer tools use
    if not isinstance(shell_id, str) or not shell_id:
        raise ToolInputError(f"`{key}` is required and must be a non-empty string")
    shell = ctx.shells.get(shell_id)
    if shell is None:
        raise ToolInputError(f"No background shell found with ID: {shell_id}")
    return shell


def _tag(name: str, value: object) -> str:
    return f"<{name}>{value}</{name}>"


class BashOutputTool(Tool):
    name = "BashOutput"
    description = (
        "Read the output a background shell (started by Bash with run_in_background) produced since the last "
        "read, and its status. Only new output is returned; with `filter`, only the new lines matching that "
        "regular expression (the other new lines are discarded)."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "bash_id": {"type": "string", "description": "The ID of the background shell"},
            "filter": {
                "type": "string",
                "description": "Optional regular expression: only new output lines matching it are returned",
            },
        },
        "required": ["bash_id"],
        "additionalProperties": False,
    }

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shell = _shell_of(args, ctx, "bash_id")
        raw = args.get("filter")
        try:
            pattern = re.compile(raw) if isinstance(raw, str) and raw else None
        except re.error as exc:
            raise ToolInputError(f"`filter` is not a valid regular expression: {exc}") from exc
        new = shell.take(pattern)
        parts = [
            _tag("retrieval_status", "not_ready" if shell.status == "running" else "success"),
            _tag("task_id", shell.id),
            _tag("task_type", "local_bash"),
            _tag("status", shell.status),
        ]
        if shell.exit_code is not None:
            parts.append(_tag("exit_code", shell.exit_code))
        if shell.timed_out:
            parts.append("The command ran past its time limit and was stopped.")
        if new.dropped:
            parts.append(f"[{new.dropped} characters of new output not shown (filtered out or over the limit)]")
        parts.append(f"<output>\n{new.text.rstrip(chr(10))}\n</output>" if new.text else _tag("output", ""))
        data = {"status": shell.status, "exit_code": shell.exit_code, "chars": len(new.text), "dropped": new.dropped}
        return ToolResult("\n\n".join(parts), data=data)


class KillShellTool(Tool):
    name = "KillShell"
    description = "Stop a background shell by its ID: the command and every process it started."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"shell_id": {"type": "string", "description": "The ID of the background shell to stop"}},
        "required": ["shell_id"],
        "additionalProperties": False,
    }

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shell = _shell_of(args, ctx, "shell_id")
        if shell.status != "running":
            return ToolResult.error(f"Background shell {shell.id} is not running (status: {shell.status})")
        ctx.shells.kill(shell)
        answer = {
            "message": f"Successfully stopped task: {shell.id} ({shell.command})",
            "task_id": shell.id,
            "task_type": "local_bash",
            "command": shell.command,
        }
        return ToolResult(json.dumps(answer, separators=(",", ":")), data={"status": shell.status})


BACKGROUND_TOOLS: tuple[type[Tool], ...] = (BashOutputTool, KillShellTool)
