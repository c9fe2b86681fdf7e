"""A command's process group, for Bash and background shells alike: its environment without credentials, waits
with a deadline, output capped to its head and tail, and a timeout or an interrupt that kills and reaps the group."""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any, Literal

from agentteams.settings.keyhelper import without_secrets
from agentteams.tools.errors import ToolInputError

if TYPE_CHECKING:
    import subprocess  # a command's run loads it, not a session's start

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


@contextlib.contextmanager
def sigint_deferred() -> Iterator[None]:
    """Hold a Ctrl-C back while a command's shell is started, then raise it: one that lands inside Popen, after the
    fork but before the child's pid is stored, would leave its process group running with nobody to kill it."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread is interrupted by SIGINT
        return
    caught: list[tuple[int, FrameType | None]] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught and callable(previous):
        previous(*caught[0])  # Python's own handler raises KeyboardInterrupt
    elif caught and previous == signal.SIG_DFL:
        raise KeyboardInterrupt


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
