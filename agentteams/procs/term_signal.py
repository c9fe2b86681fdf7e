"""SIGTERM as claude takes it in a session: a graceful end (its `finally` blocks run: its team taken down, its record
and socket gone, its exit notices sent), exit status 143, where Python's default would die mid-step."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

GRACE = 10.0  # seconds the graceful end may take; then the process leaves at once, saying where it was stuck
_left = threading.Event()  # the handler has run: a SIGTERM relayed again must not cut the end short


def leave_on_sigterm(*, relay: bool = False) -> None:
    """From the main thread (where Python runs signal handlers): SIGTERM raises SystemExit(143) there. `relay`, for
    a session with no event loop of its own in the main thread: see `_relay_to_main`."""
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGTERM, _leave)
    if relay:
        _relay_to_main()


def _relay_to_main() -> None:
    """The kernel may give a process's SIGTERM to any of its threads. One other than the main thread, blocked in a read,
    only sets Python's flag, and a main thread blocked in a lock's wait never runs the handler (seen: a -p session
    still running 30 s after SIGTERM, its main thread in a futex wait, SIGTERM caught and not pending). The C handler
    writes each signal's number to a wakeup pipe: a thread reading it sends SIGTERM on to the main thread itself."""
    try:
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except (OSError, ValueError):
        return  # nothing relayed: the handler runs when the main thread next does
    threading.Thread(target=_relay, args=(read_end,), name="sigterm-relay", daemon=True).start()


def _relay(read_end: int) -> None:
    main = threading.main_thread().ident
    sent = 0.0
    while data := os.read(read_end, 64):
        # sent on until the handler has run, at most twice a second (the main thread's own receipt of it writes to the
        # pipe again)
        if int(signal.SIGTERM) in data and not _left.is_set() and main is not None and time.monotonic() - sent > 0.5:
            sent = time.monotonic()
            signal.pthread_kill(main, signal.SIGTERM)


def _leave(signum: int, _frame: object) -> None:
    if _left.is_set():
        return
    _left.set()
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
