"""The lead as the REPL holds it: composed before the prompt, or `Deferred`, composed on a thread of its own once the
prompt is on screen, while the person types (the prompt comes up without waiting for the lead's modules)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from concurrent.futures import Future

    from agentteams.team.lead.runtime import LeadRuntime


class Lead(Protocol):
    """What the REPL needs of the composed lead (run.lead_setup.LeadParts)."""

    runtime: LeadRuntime

    def close(self, *, team_down: bool = True, timeout: float = 20.0) -> None: ...


class Deferred:
    """A lead still to be composed by `build`; `mode` is the permission mode it will start in (the toolbar shows it
    until then)."""

    def __init__(self, build: Callable[[], Lead], mode: str) -> None:
        self.build = build
        self.mode = mode
        self._future: Future[Lead] | None = None

    def start(self, done: Callable[[], None]) -> None:
        """Compose it on a thread of its own (once; later calls do nothing); `done` runs on the calling event loop
        when it is composed or has failed."""
        from concurrent.futures import Future

        if self._future is not None:
            return
        future: Future[Lead] = Future()
        self._future, loop = future, asyncio.get_running_loop()

        def compose() -> None:
            try:
                future.set_result(self.build())
            except BaseException as e:  # whatever it is, it is raised where the REPL waits for the lead
                future.set_exception(e)
            with contextlib.suppress(RuntimeError):  # the loop is closed: the session ended meanwhile
                loop.call_soon_threadsafe(done)

        threading.Thread(target=compose, name="lead-compose", daemon=True).start()

    def failure(self) -> BaseException | None:
        """Why composing it failed, once it has; None while it runs or when it succeeded."""
        future = self._future
        return future.exception() if future is not None and future.done() else None

    async def wait(self) -> Lead:
        """The lead, once composed (started now if it was not yet); its failure is raised here."""
        if self._future is None:
            self.start(lambda: None)
        assert self._future is not None
        return await asyncio.wrap_future(self._future)

    def result(self) -> Lead | None:
        """The lead, waiting for it if it is being composed; None if it never was (not started, or it failed)."""
        if self._future is None:
            return None
        with contextlib.suppress(Exception):  # its failure was raised where the REPL waited for the lead
            return self._future.result()
        return None
