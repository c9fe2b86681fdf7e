"""Daemon threads kept for reuse: work handed to an idle one runs without a new thread's start, which waits until the
new thread has been scheduled (on a loaded machine, milliseconds of a message's delivery). Daemons: none holds the
process's exit up (an abandoned model call may still be blocked in one)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

IDLE_NAME = "agentteams-idle-worker"  # an idle worker's name: a test looking for a named thread does not see it
KEEP_IDLE = 8  # idle workers kept at most; one finishing beyond that ends
IDLE_SECONDS = 300.0  # an idle worker unused this long ends


class _Worker:
    def __init__(self, pool: Workers) -> None:
        self.pool = pool
        self.job: tuple[str, Callable[[], None]] | None = None
        self.given = threading.Event()

    def give(self, name: str, job: Callable[[], None]) -> None:
        self.job = (name, job)
        self.given.set()

    def run(self) -> None:
        me = threading.current_thread()
        while True:
            if not self.given.wait(IDLE_SECONDS) and self.pool.retire(self):
                return
            self.given.wait()  # taken from the idle list just as its time ran out: the job is on its way
            self.given.clear()
            assert self.job is not None
            me.name, job = self.job
            self.job = None
            try:
                job()
            finally:
                me.name = IDLE_NAME
            if not self.pool.idle(self):
                return


class Workers:
    """Runs each job on an idle worker, or on a new one when none is idle."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()

    def submit(self, name: str, job: Callable[[], None]) -> None:
        """Run `job` on a worker named `name` while it runs; returns at once (the job says itself when it is done)."""
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is not None:
            worker.give(name, job)
            return
        worker = _Worker(self)
        worker.give(name, job)
        threading.Thread(target=worker.run, name=name, daemon=True).start()

    def idle(self, worker: _Worker) -> bool:
        """A worker finished its job: kept for the next one (True), or told to end."""
        with self._lock:
            if len(self._idle) >= KEEP_IDLE:
                return False
            self._idle.append(worker)
            return True

    def retire(self, worker: _Worker) -> bool:
        """An idle worker's time ran out: True if it may end (no job was handed to it meanwhile)."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


WORKERS = Workers()  # one per process: any agent's model calls and a teammate's turn bookkeeping


def started(name: str, job: Callable[[], None]) -> threading.Event:
    """`job` on a worker; the flag returned is set once it has ended (failed too: its error is the thread's)."""
    done = threading.Event()

    def run() -> None:
        try:
            job()
        finally:
            done.set()

    WORKERS.submit(name, run)
    return done


def _forget_in_child() -> None:
    """A forked child has none of its parent's threads: it starts its own workers."""
    global WORKERS
    WORKERS = Workers()


os.register_at_fork(after_in_child=_forget_in_child)
