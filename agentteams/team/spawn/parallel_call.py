"""`Beside`: one call run in a thread while the caller starts something, joined before the result is used (a spawn's
fsync'd prompt write beside its pane's start); a failure of either undoes what the other made, in `joined`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

A = TypeVar("A")
R = TypeVar("R")


class Beside:
    """`call()` in a thread (or at once, `inline`), its exception kept for `joined`."""

    def __init__(self, call: Callable[[], object], *, inline: bool = False) -> None:
        self._call = call
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if inline:
            self._run()
        else:
            self._thread = threading.Thread(target=self._run, name="beside", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            self._call()
        except BaseException as e:  # handed to the caller's thread by `joined`
            self._error = e

    def joined(self, start: Callable[[A], R], arg: A, undo: Callable[[R], object]) -> R:
        """`start(arg)` while the call runs; once both are done, what `start` made, or: `start`'s exception (the call
        finished first), or the call's (what `start` made undone first)."""
        try:
            made = start(arg)
        finally:
            if self._thread is not None:
                self._thread.join()
        if self._error is not None:
            undo(made)
            raise self._error
        return made
