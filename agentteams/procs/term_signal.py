"""SIGTERM as claude takes it in a session: a graceful end (its `finally` blocks run: its team taken down, its record
and socket gone, its exit notices sent), exit status 143, where Python's default would die mid-step."""

from __future__ import annotations

import os
import signal
import sys
import threading

GRACE = 10.0  # seconds the graceful end may take; then the process leaves at once, saying where it was stuck


def leave_on_sigterm() -> None:
    """From the main thread (where Python runs signal handlers): SIGTERM raises SystemExit(143) there."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _leave)


def _leave(signum: int, _frame: object) -> None:
    deadline = threading.Timer(GRACE, _stuck, (128 + signum,))
    deadline.daemon = True  # never what keeps the process up
    deadline.start()
    sys.exit(128 + signum)


def _stuck(status: int) -> None:
    """Every wait has a deadline, the end's too: a bug of ours that holds it is said, with every thread's stack."""
    import faulthandler

    sys.stderr.write(f"agentteams: the session did not end within {GRACE:g}s of SIGTERM; leaving now. Threads:\n")
    faulthandler.dump_traceback(all_threads=True)
    sys.stderr.flush()
    os._exit(status)
