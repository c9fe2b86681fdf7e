"""A forked child's life around the CLI it runs: the entry's exit code, the interpreter's shutdown done by hand (the
child ends with `os._exit`), and the watch on its launcher's connection (EOF: the pane went, so we hang up)."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable

from agentteams.procs.fork.early import LateLauncher

Launcher = socket.socket | LateLauncher  # what a child reports its pid and exit code to


def run(entry: Callable[[], object]) -> int:
    """`entry()`'s exit status, as the interpreter would report it (an uncaught error: 70, and one line)."""
    try:
        entry()
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return (e.code or 0) & 0xFF
        print(e.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BaseException as e:
        print(f"agentteams: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 70
    return 0


def shutdown() -> None:
    """What interpreter exit would do: wait for non-daemon threads, run atexit handlers, flush stdio."""
    for t in threading.enumerate():
        if t is not threading.current_thread() and not t.daemon:
            t.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


def watch_launcher(conn: Launcher, done: threading.Event) -> None:
    """EOF from the launcher (pane killed, launcher SIGKILLed): end as a hung-up process would."""
    with contextlib.suppress(OSError):
        while conn.recv(4096):
            pass  # the launcher sends nothing after its request
    if not done.is_set():
        os.kill(os.getpid(), signal.SIGHUP)
