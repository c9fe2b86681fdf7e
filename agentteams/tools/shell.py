"""Bash: runs one shell command in the agent's working directory, in a process group of its own.

A timeout or an interrupt kills and reaps the whole group; output is capped, keeping its head and tail.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any, ClassVar, Literal

from agentteams.settings.keyhelper import without_secrets
from agentteams.tools.base import Tool, ToolContext, ToolInputError, ToolResult, require_str

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
KILL_GRACE_S = 1.0  # between SIGTERM and SIGKILL
DRAIN_GRACE_S = 0.5  # after the shell exits, how long leftovers may keep our output pipe open

Outcome = Literal["exited", "timeout", "interrupted"]


def child_env() -> dict[str, str]:
    """The environment a command sees: ours, without the credentials."""
    return without_secrets(os.environ)


class OutputCapture:
    """Reads a pipe on a thread until EOF, keeping at most `limit` characters: the head and the tail."""

    def __init__(self, stream: IO[bytes], limit: int = MAX_OUTPUT_CHARS) -> None:
        self._stream = stream
        self._half = limit // 2
        self._head = ""
        self._tail: list[str] = []  # trimmed to the last `_half` characters now and then
        self._tail_len = 0
        self.total = 0  # characters seen
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._pump, name="bash-output", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        fd = self._stream.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while not self._stop.is_set():
            try:
                chunk = os.read(fd, 65536) if poller.poll(50) else None
            except OSError:
                chunk = b""
            if chunk is None:
                continue
            self._add(decoder.decode(chunk))
            if not chunk:
                break
        self._add(decoder.decode(b"", final=True))
        self._stream.close()

    def _add(self, text: str) -> None:
        self.total += len(text)
        room = self._half - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            if self._tail_len > 2 * self._half:
                self._tail = ["".join(self._tail)[-self._half :]]
                self._tail_len = len(self._tail[0])

    def stop(self) -> None:
        """Stop reading (after at most one more chunk), even though someone still holds the pipe's write end."""
        self._stop.set()
        self._thread.join()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for EOF; True once the pipe is drained."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def cut(self) -> int:
        """How many characters were dropped from the middle."""
        return self.total - len(self._head) - min(self._tail_len, self._half)

    def text(self) -> str:
        cut, tail = self.cut, "".join(self._tail)[-self._half :]
        if cut <= 0:
            return self._head + tail
        return f"{self._head}\n\n[... {cut} characters of output cut ...]\n\n{tail}"


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies, already dead, do not count)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def _wait_group_gone(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    delay = 0.005
    while group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the command's whole process group, SIGKILL whatever is left after a grace, and reap the shell."""
    pgid = proc.pid  # start_new_session made the shell the group leader
    _signal_group(pgid, signal.SIGTERM)
    if not _wait_group_gone(pgid, KILL_GRACE_S):
        _signal_group(pgid, signal.SIGKILL)
        _wait_group_gone(pgid, 5.0)
    proc.wait()


def wait_for(proc: subprocess.Popen[bytes], timeout_s: float, interrupt: threading.Event) -> Outcome:
    """Wait for the shell to exit, the deadline to pass, or the interrupt to be set, whichever comes first."""
    deadline = time.monotonic() + timeout_s
    delay = 0.002
    while proc.poll() is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return "timeout"
        if interrupt.wait(min(delay, remaining)):
            return "interrupted"
        delay = min(delay * 2, 0.05)
    return "exited"


def parse_timeout(args: dict[str, Any], default: int = DEFAULT_TIMEOUT_MS, most: int = MAX_TIMEOUT_MS) -> int:
    """The timeout in ms: `default` when absent, at most `most` (a background command's are longer)."""
    value = args.get("timeout")
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ToolInputError("`timeout` must be a positive number of milliseconds")
    return int(min(value, most))


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g}"


def describe(outcome: Outcome, code: int, timeout_ms: int) -> str | None:
    """The status line added under the output, or None for a clean exit."""
    if outcome == "timeout":
        return f"Command timed out after {_seconds(timeout_ms)} s; it and every process it started were stopped."
    if outcome == "interrupted":
        return "Command interrupted; it and every process it started were stopped."
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"Exit code: {code} (killed by {name})"
    return f"Exit code: {code}" if code else None


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
            from agentteams.tools.bg_tools import start_background  # bg_tools builds on this module

            return start_background(command, args, ctx)
        timeout_ms = parse_timeout(args)
        proc: subprocess.Popen[bytes] | None = None
        try:
            proc = subprocess.Popen(
                ["bash", "-c", command],
                cwd=ctx.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=child_env(),
                start_new_session=True,
            )
            assert proc.stdout is not None
            capture = OutputCapture(proc.stdout)  # starts a thread: slow to be scheduled on a busy machine
        except BaseException as exc:  # Ctrl-C before the wait began too: the command must not outlive the agent
            if proc is not None:
                kill_group(proc)
            if isinstance(exc, OSError):
                return ToolResult.error(f"Could not start bash: {exc}")
            raise
        return self._finish(proc, capture, timeout_ms, ctx)

    def _finish(
        self, proc: subprocess.Popen[bytes], capture: OutputCapture, timeout_ms: int, ctx: ToolContext
    ) -> ToolResult:
        try:
            outcome = wait_for(proc, timeout_ms / 1000, ctx.interrupt)
        except BaseException:  # Ctrl-C or shutdown of the agent itself: the command must not outlive it
            kill_group(proc)
            raise
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
