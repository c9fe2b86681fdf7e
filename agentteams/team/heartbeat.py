"""The heartbeat: one thread per process rewrites the presence record of every agent of ours running in it every
few seconds, so a stopped or hung process is seen as unresponsive (store/presence.py says when)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from agentteams import diagnostics
from agentteams.store.presence import Presence
from agentteams.team.delivery import TeamEvent

ENV_VAR = "AGENTTEAMS_HEARTBEAT_SECONDS"
DEFAULT_SECONDS = 5.0  # one small atomic write per agent every 5 s
STALL_MIN_SECONDS = 10.0  # an idle loop that has not come round for this long (and 4 beats) has stalled

Beat = Callable[[], None]


def interval() -> float:
    """Seconds between beats: AGENTTEAMS_HEARTBEAT_SECONDS (0.1 to 60), else 5."""
    try:
        seconds = float(os.environ.get(ENV_VAR, DEFAULT_SECONDS))
    except ValueError:
        return DEFAULT_SECONDS
    return min(max(seconds, 0.1), 60.0)


def stall_after(every: float) -> float:
    """How long an agent's idle loop may go without coming round before its beats stop."""
    return max(STALL_MIN_SECONDS, 4 * every)


class Heartbeat:
    """Calls every registered beat each interval, on one daemon thread that runs while any is registered."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._beats: dict[int, Beat] = {}
        self._next = 0
        self._thread: threading.Thread | None = None

    def add(self, beat: Beat) -> Callable[[], None]:
        """Start beating `beat`; returns what stops it."""
        with self._lock:
            key = self._next
            self._next += 1
            self._beats[key] = beat
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
                self._thread.start()
        return lambda: self._remove(key)

    def _remove(self, key: int) -> None:
        with self._lock:
            self._beats.pop(key, None)

    def _run(self) -> None:
        every = interval()
        wake = threading.Event()  # never set: a timed sleep that a test's thread dump names
        while True:
            wake.wait(every)
            with self._lock:
                beats = list(self._beats.values())
                if not beats:
                    self._thread = None
                    return
            for beat in beats:
                try:
                    beat()
                except Exception as e:  # one agent's failing beat must not stop the others'
                    diagnostics.debug("a heartbeat failed: %s: %s", type(e).__name__, e)


HEARTBEAT = Heartbeat()


class SilenceWatch:
    """The lead's view of its teammates' beats: one whose process exists but has stopped beating is reported once,
    and once more when it beats again. Its tasks stay with it meanwhile (only a teammate whose process is gone
    loses them): a stopped process may be resumed, and would then work on a task another has taken."""

    def __init__(self) -> None:
        self._silent: set[str] = set()

    def heard(self, name: str, presence: Presence | None) -> TeamEvent | None:
        silent = presence is not None and presence.liveness() == "unresponsive"
        if silent and presence is not None and name not in self._silent:
            self._silent.add(name)
            secs = presence.silent_ms() / 1000
            text = f"Teammate {name} has not responded for {secs:.0f}s (its process {presence.pid} still exists)"
            return TeamEvent("unresponsive", name, text + "; its tasks stay with it.")
        if not silent and name in self._silent:
            self._silent.discard(name)
            return TeamEvent("responsive", name, f"Teammate {name} responds again.")
        return None

    def forget(self, name: str) -> None:
        self._silent.discard(name)
