"""SIGTERM as claude takes it in a session: a graceful end (its `finally` blocks run: its team taken down, its record
and socket gone, its exit notices sent), exit status 143, where Python's default would die mid-step."""

from __future__ import annotations

import signal
import sys
import threading


def leave_on_sigterm() -> None:
    """From the main thread (where Python runs signal handlers): SIGTERM raises SystemExit(143) there."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
