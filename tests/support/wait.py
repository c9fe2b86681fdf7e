"""The one poll-until helper: every wait for another process, thread or file has a deadline and names what it
waited for."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(
    cond: Callable[[], bool],
    timeout: float,
    what: str,
    *,
    interval: float = 0.01,
    explain: Callable[[], str] | None = None,
) -> float:
    """Poll `cond` every `interval` s until true; returns the seconds it took. After `timeout` s the test fails
    with AssertionError naming `what` (and `explain()`'s text: pane captures, files, anything that helps)."""
    start = time.monotonic()
    while not cond():
        if time.monotonic() - start > timeout:
            message = f"timed out after {timeout:g}s waiting for {what}"
            raise AssertionError(f"{message}\n{explain()}" if explain is not None else message)
        time.sleep(interval)
    return time.monotonic() - start
