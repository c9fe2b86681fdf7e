"""Bash: runs one shell command in the agent's working directory, in a process group of its own
(tools/shell/process.py), or in the background (tools/shell/background_tools.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from agentteams.tools.base import Tool, ToolContext, ToolResult, require_str
from agentteams.tools.shell.background_tools import start_background
from agentteams.tools.shell.process import (
    DRAIN_GRACE_S,
    Outcome,
    OutputCapture,
    child_env,
    describe,
    kill_group,
    parse_timeout,
    sigint_deferred,
    wait_for,
)

if TYPE_CHECKING:
    import subprocess  # a command's run loads it, not a session's start


class BashTool(Tool):
    name = "Bash"
    description = (
        "Run a shell command with bash in the current working directory and return its combined "
        "stdout and stderr. Standard input is empty; nothing interactive works. The command runs in its "
        "own process group; on timeout (default 120000 ms, max 600000 ms) the whole group is killed. "
        "Long output is cut in the middle. Prefer Read, Edit, Glob and Grep over cat, sed, find and grep."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run"},
            "timeout": {"type": "number", "description": "Timeout in milliseconds (max 600000)"},
            "description": {"type": "string", "description": "What the command does, in 5-10 words"},
            "run_in_background": {
                "type": "boolean",
                "description": "Run it in the background (read it with BashOutput, stop it with KillShell); "
                "`timeout` is then how long it may run (default 600000 ms, max 7200000 ms)",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    kind = "execute"

    def permission_target(self, args: dict[str, Any], cwd: Path | None = None) -> str | None:
        command = args.get("command")
        return command if isinstance(command, str) else None

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = require_str(args, "command")
        if not ctx.cwd.is_dir():
            return ToolResult.error(f"The working directory {ctx.cwd} does not exist")
        if args.get("run_in_background") is True:
            return start_background(command, args, ctx)
        import subprocess  # loaded by a command's run, not by every session that offers the tool

        timeout_ms = parse_timeout(args)
        proc: subprocess.Popen[bytes] | None = None
        started = False
        try:
            with sigint_deferred():  # raised once `proc` is bound: the group it started is then killed below
                proc = subprocess.Popen(
                    ["bash", "-c", command],
                    cwd=ctx.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    env=child_env(),
                    start_new_session=True,
                )
            started = True
            assert proc.stdout is not None
            capture = OutputCapture(proc.stdout)  # starts a thread: slow to be scheduled on a busy machine
            outcome = wait_for(proc, timeout_ms / 1000, ctx.interrupt)
        except BaseException as exc:  # Ctrl-C or shutdown of the agent itself: the command must not outlive it
            if proc is not None:
                kill_group(proc)
            if isinstance(exc, OSError) and not started:
                return ToolResult.error(f"Could not start bash: {exc}")
            raise
        return self._finish(proc, capture, outcome, timeout_ms)

    def _finish(
        self, proc: subprocess.Popen[bytes], capture: OutputCapture, outcome: Outcome, timeout_ms: int
    ) -> ToolResult:
        leftovers = escaped = False
        if outcome != "exited":
            kill_group(proc)
        elif not capture.join(DRAIN_GRACE_S):
            leftovers = True  # background processes still hold the output pipe: stop them
            kill_group(proc)
        if not capture.join(DRAIN_GRACE_S):
            escaped = True  # something left the group (setsid, a daemon) and still holds the output
            capture.stop()
        code = proc.returncode
        output = capture.text().rstrip("\n")
        lines = [output] if output else []
        status = describe(outcome, code, timeout_ms)
        if status:
            lines.append(status)
        if leftovers:
            lines.append("Background processes that kept the output open were stopped when the command ended.")
        if escaped:
            lines.append(
                "Some process left the command's process group and still holds its output; it was not stopped."
            )
        data = {
            "exit_code": code,
            "timed_out": outcome == "timeout",
            "interrupted": outcome == "interrupted",
            "chars_cut": max(capture.cut, 0),
        }
        return ToolResult("\n".join(lines) or "(no output)", is_error=outcome != "exited" or code != 0, data=data)
