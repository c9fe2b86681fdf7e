"""A question put to the person for a teammate can be withdrawn (the teammate died or left meanwhile): the lead asks
inside a scope it can end, and the prompt that waits for the answer (ui/questions.py) takes the question back then.
Stdlib only: the prompt imports it at its first question."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

_local = threading.local()  # the scope the asking thread is in (a question is asked on the thread that waits)


class Withdrawable:
    """One asking's scope: `withdraw()` once, and every listener is called (at once if it comes later)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._withdrawn = False
        self._listeners: list[Callable[[], None]] = []

    @property
    def withdrawn(self) -> bool:
        return self._withdrawn

    def on_withdraw(self, listener: Callable[[], None]) -> None:
        with self._lock:
            now = self._withdrawn
            if not now:
                self._listeners.append(listener)
        if now:
            listener()

    def withdraw(self) -> None:
        with self._lock:
            if self._withdrawn:
                return
            self._withdrawn = True
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()


@contextlib.contextmanager
def asking(scope: Withdrawable) -> Iterator[Withdrawable]:
    """Questions asked on this thread meanwhile are withdrawn with `scope`."""
    _local.scope = scope
    try:
        yield scope
    finally:
        _local.scope = None


def current() -> Withdrawable | None:
    """The scope of the question being asked on this thread, if the lead asks it for a teammate."""
    scope: Withdrawable | None = getattr(_local, "scope", None)
    return scope
