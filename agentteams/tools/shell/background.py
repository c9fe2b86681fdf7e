"""An agent's background shells: each command in a process group of its own, its output kept bounded in memory and
read piece by piece (only what is new since the last read), stopped on KillShell, at its timeout, or when the
agent ends; a guard process (a small bash loop) kills what is left even if the agent itself is killed."""

from __future__ import annotations

import atexit
import codecs
import contextlib
import os
import re
import secrets
import select
import string
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal, cast

from agentteams.tools.shell.process import child_env, group_alive, kill_group, sigint_deferred

if TYPE_CHECKING:
    import subprocess  # a command's run loads it, not a session's start

MAX_KEPT_CHARS = 1_000_000  # unread output kept per shell; beyond it the oldest unread output is dropped (counted)
MAX_READ_CHARS = 30_000  # one read's answer: the newest part of the new output
READS_PER_TURN = 16  # pipe reads (64 KiB each) under the lock at a time
DEFAULT_TIMEOUT_MS = 600_000  # how long a background command may run, as Claude Code's (2.1.330)
MAX_TIMEOUT_MS = 7_200_000
ID_CHARS = string.ascii_lowercase + string.digits

# The guard reads `+PGID` (watch) and `-PGID` (forget) lines; at EOF (the agent is gone, however it went: even
# SIGKILL closes our end of the pipe) it stops every group still watched: SIGTERM, then SIGKILL after a grace.
GUARD_SCRIPT = r"""
trap '' INT HUP
declare -A groups
while IFS= read -r line; do
  case $line in
    +[0-9]*) groups[${line#+}]=1 ;;
    -[0-9]*) unset "groups[${line#-}]" ;;
  esac
done
[ ${#groups[@]} -eq 0 ] && exit 0
for g in "${!groups[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
for _ in $(seq 50); do
  alive=0
  for g in "${!groups[@]}"; do kill -0 -- "-$g" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && exit 0
  sleep 0.02
done
for g in "${!groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
exit 0
"""

ShellStatus = Literal["running", "completed", "failed", "killed"]


@dataclass(frozen=True)
class NewOutput:
    """What one read returns: the new text (after any filter), and how much was dropped or cut unseen."""

    text: str
    dropped: int  # characters never shown: over the kept bound, over one read's size, or filtered out


class BackgroundShell:
    """One background command: a pump thread keeps its output, a waiter thread reaps it (or stops it at its
    timeout)."""

    def __init__(self, shell_id: str, command: str, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
        self.id = shell_id
        self.command = command
        self.proc = proc
        self.status: ShellStatus = "running"
        self.timed_out = False
        self.noticed = False  # the agent was told it ended (or ended it itself)
        self._chunks: list[str] = []
        self._kept = 0
        self._dropped = 0
        self._lock = threading.Lock()  # the pipe is read only under it: by the pump, and by a read (`take`)
        self._eof = threading.Event()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        assert proc.stdout is not None
        pipe = cast(BinaryIO, proc.stdout)
        self._fd = pipe.fileno()
        os.set_blocking(self._fd, False)
        threading.Thread(target=self._pump, args=(pipe,), name=f"bg-out-{shell_id}", daemon=True).start()
        threading.Thread(target=self._wait, args=(timeout_s,), name=f"bg-wait-{shell_id}", daemon=True).start()

    @property
    def exit_code(self) -> int | None:
        return self.proc.returncode

    def _pump(self, stream: BinaryIO) -> None:
        fd = stream.fileno()
        with stream:
            while True:
                select.select([fd], [], [])  # output to read, or the end
                with self._lock:
                    if self._eof.is_set() or self._read_locked(fd):
                        return

    def _read_locked(self, fd: int) -> bool:
        """Take what the pipe holds now (a bounded amount: a command that never stops printing must not keep the
        lock); True at its end. The caller holds the lock."""
        for _ in range(READS_PER_TURN):
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return False
            if not chunk:
                self._add_locked(self._decoder.decode(b"", final=True))
                self._eof.set()
                return True
            self._add_locked(self._decoder.decode(chunk))
        return False

    def _add_locked(self, text: str) -> None:
        if not text:
            return
        self._chunks.append(text)
        self._kept += len(text)
        while self._kept > MAX_KEPT_CHARS:  # drop the oldest unread output, whole chunks then a part
            over = self._kept - MAX_KEPT_CHARS
            first = self._chunks[0]
            cut = min(over, len(first))
            self._chunks[0] = first[cut:]
            if not self._chunks[0]:
                self._chunks.pop(0)
            self._kept -= cut
            self._dropped += cut

    def _wait(self, timeout_s: float) -> None:
        import subprocess

        try:
            code = self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.timed_out = True
            self.stop()
            return
        if self.status == "running":
            self.status = "completed" if code == 0 else "failed"

    def stop(self) -> None:
        """Kill the whole group (SIGTERM, then SIGKILL after a grace) and reap the shell."""
        if self.status == "running" or group_alive(self.proc.pid):
            self.status = "killed"
            kill_group(self.proc)

    def take(self, pattern: re.Pattern[str] | None = None) -> NewOutput:
        """The output since the last take (a filter keeps only matching lines; the rest is gone, as in Claude
        Code); at most MAX_READ_CHARS of it, the newest."""
        if self.status != "running":
            self._eof.wait(0.5)  # the last output may still be in the pipe
        with self._lock:
            if not self._eof.is_set():  # what the command printed before this read is in it, as from claude's file
                self._read_locked(self._fd)
            text, dropped = "".join(self._chunks), self._dropped
            self._chunks, self._kept, self._dropped = [], 0, 0
        if pattern is not None:
            lines = text.splitlines(keepends=True)
            kept = [line for line in lines if pattern.search(line)]
            dropped += len(text) - sum(map(len, kept))
            text = "".join(kept)
        if len(text) > MAX_READ_CHARS:
            dropped += len(text) - MAX_READ_CHARS
            text = text[-MAX_READ_CHARS:]
        return NewOutput(text, dropped)


def notice_text(shell: BackgroundShell) -> str:
    code = shell.proc.returncode
    if shell.timed_out:
        status, how = "killed", "was stopped at its time limit"
    else:
        status, how = ("completed", "completed") if code == 0 else ("failed", f"failed with exit code {code}")
    return (
        f"<task-notification>\n<task-id>{shell.id}</task-id>\n<status>{status}</status>\n"
        f'<summary>Background command "{shell.command}" {how}</summary>\n</task-notification>\n'
        f"(An automatic notice, not from the user: read its last output with BashOutput, bash_id {shell.id}.)"
    )


class ShellRegistry:
    """The background shells of one agent (its subagents share them), and the guard that outlives it."""

    def __init__(self) -> None:
        self._shells: dict[str, BackgroundShell] = {}
        self._lock = threading.Lock()
        self._guard: subprocess.Popen[bytes] | None = None
        self._closed = False

    def start(self, command: str, cwd: Path, timeout_ms: int) -> BackgroundShell:
        """Start `command` in the background (OSError if bash cannot start)."""
        import subprocess  # loaded by a command's run, not by every session that offers the tool

        with self._lock:
            if self._closed:
                raise OSError("the agent is ending: no new background commands")
            self._ensure_guard()
            with sigint_deferred():  # a Ctrl-C inside Popen would lose the pid: the guard would never hear of it
                proc = subprocess.Popen(
                    ["bash", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, env=child_env(), start_new_session=True,
                )  # fmt: skip
                self._tell(f"+{proc.pid}")
            shell_id = "b" + "".join(secrets.choice(ID_CHARS) for _ in range(8))
            shell = BackgroundShell(shell_id, command, proc, timeout_ms / 1000)
            self._shells[shell_id] = shell
            return shell

    def get(self, shell_id: str) -> BackgroundShell | None:
        with self._lock:
            return self._shells.get(shell_id)

    def kill(self, shell: BackgroundShell) -> None:
        shell.noticed = True  # KillShell's own answer says so
        shell.stop()
        with self._lock:
            self._tell(f"-{shell.proc.pid}")

    def notices(self) -> list[dict[str, str]]:
        """A text block for each command that ended since the last look (as Claude Code's task notification), so
        the model hears of it at the next tool-result boundary."""
        with self._lock:
            ended = [s for s in self._shells.values() if not s.noticed and s.proc.poll() is not None]
            for shell in ended:
                shell.noticed = True
        return [{"type": "text", "text": notice_text(s)} for s in ended]

    def close(self) -> None:
        """Stop every background group and let the guard go (the agent is ending)."""
        import subprocess

        with self._lock:
            self._closed = True
            shells = list(self._shells.values())
        for shell in shells:
            shell.stop()
        with self._lock:
            for shell in shells:
                self._tell(f"-{shell.proc.pid}")
            guard, self._guard = self._guard, None
        if guard is not None:
            with contextlib.suppress(OSError, ValueError):
                assert guard.stdin is not None
                guard.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                guard.wait(5)

    def _ensure_guard(self) -> None:
        import subprocess

        if self._guard is not None:
            return
        self._guard = subprocess.Popen(
            ["bash", "-c", GUARD_SCRIPT], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env(), start_new_session=True,
            cwd="/",
        )  # fmt: skip
        atexit.register(self.close)

    def _tell(self, line: str) -> None:
        guard = self._guard
        if guard is None or guard.stdin is None:
            return
        with contextlib.suppress(OSError, ValueError):
            guard.stdin.write(f"{line}\n".encode())
            guard.stdin.flush()
