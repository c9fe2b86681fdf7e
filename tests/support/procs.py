"""Processes as tests see them: a child's environment, liveness, argv, descendants, and making sure they end.

`pid_alive` is imported here and nowhere else in the tests: where it lives in `agentteams` is a one-line change.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from agentteams.pids import pid_alive
from tests.support.wait import wait_until

__all__ = [
    "child_env",
    "children",
    "cmdline",
    "end_processes",
    "find_process",
    "pid_alive",
    "process_tree",
    "processes_with_env",
    "read_until",
]


def child_env(config_root: Path) -> dict[str, str]:
    """Environment for a child process: same config root, outside tmux."""
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    env["CLAUDE_CONFIG_DIR"] = str(config_root)
    return env


def cmdline(pid: int) -> list[str]:
    """The process's argv; [] once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return raw.decode("utf-8", "replace").split("\0")[:-1]


def children(pid: int) -> list[int]:
    """The process's direct children (every thread's); [] once it is gone."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids: list[int] = []
    for task in tasks:
        try:
            kids += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    return kids


def process_tree(roots: Iterable[int]) -> list[int]:
    """`roots` and all their descendants, parents first."""
    todo, seen = list(roots), []
    while todo:
        pid = todo.pop(0)
        if pid not in seen:
            seen.append(pid)
            todo += children(pid)
    return seen


def find_process(root: int, marker: str) -> int | None:
    """`root` or the first descendant whose argv contains `marker` (e.g. "--agent-name")."""
    return next((pid for pid in process_tree([root]) if marker in cmdline(pid)), None)


def processes_with_env(name: str, value: str, *, exclude: frozenset[int] = frozenset()) -> list[int]:
    """Live processes whose environment has `name=value` (how a test finds what it started, and leftovers)."""
    wanted = f"{name}={value}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in exclude or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if wanted in environ.split(b"\0") and pid_alive(int(entry)):
            found.append(int(entry))
    return found


def end_processes(pids: Iterable[int], timeout: float = 10.0) -> None:
    """Give `pids` `timeout` s to end on their own, then SIGKILL whatever still runs (for teardown)."""
    pids = list(pids)
    with contextlib.suppress(AssertionError):
        wait_until(lambda: not any(map(pid_alive, pids)), timeout, "the processes to end", interval=0.05)
    for pid in filter(pid_alive, pids):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def read_until(proc: subprocess.Popen[str], needle: str, timeout: float) -> str:
    """`proc`'s stdout until it contains `needle` (fails after `timeout`). Raw reads: a buffered readline can
    hold the next line where select() cannot see it."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    raw, deadline = b"", time.monotonic() + timeout
    while needle.encode() not in raw:
        left = deadline - time.monotonic()
        assert left > 0, f"no {needle!r} in {raw.decode(errors='replace')!r}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"the command ended before printing {needle!r}: {raw.decode(errors='replace')!r}"
            raw += chunk
    return raw.decode(errors="replace")


@contextlib.contextmanager
def stdin_session(proc: subprocess.Popen[str], timeout: float = 30.0) -> Iterator[None]:
    """A session driven through its stdin: left normally, its stdin is closed and it is waited for (`timeout` s); left
    any way, a process still running is killed."""
    try:
        yield
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
