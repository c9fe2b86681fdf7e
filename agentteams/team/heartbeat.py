"""The heartbeat: one thread per process rewrites the presence record of every agent of ours running in it every
few seconds, so a stopped or hung process is seen as unresponsive (store/presence.py says when)."""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from agentteams import diagnostics
from agentteams.agent.loop import AgentEvent
from agentteams.model.pricing import AgentAccount
from agentteams.model.types import Usage
from agentteams.store.api import Store
from agentteams.store.fs.atomic_json import epoch_ms
from agentteams.store.outages import judged
from agentteams.store.paths import LEAD_NAME
from agentteams.store.presence import Presence, State
from agentteams.team.delivery import TeamEvent

ENV_VAR = "AGENTTEAMS_HEARTBEAT_SECONDS"
DEFAULT_SECONDS = 5.0  # one small atomic write per agent every 5 s
STALL_MIN_SECONDS = 25.0  # an idle loop not come round for this long (and 4 beats) has stalled: 2.5 idle rounds

Beat = Callable[[], object]


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


class OwnPresence:
    """An agent's own presence record, written under a lock (its runtime's threads and the heartbeat all write it);
    a beat rewrites it as it is, once the runtime has written it, until it says the agent exited."""

    def __init__(self, put: Callable[[Presence], None], record: Presence) -> None:
        record.heartbeat_ms = int(interval() * 1000)
        self.record = record
        self.in_turn = False  # inside a turn a long model answer or tool run is no stall
        self._put = put
        self._lock = threading.Lock()
        self._written = 0.0  # monotonic time of the last write; 0: never written
        self._came_round: float | None = None  # when its idle loop last came round; None: not watched

    def spent(self, usage: Usage, cost_usd: float, context: tuple[int, int], *, now: bool) -> None:
        """An answer's usage and the context's size into the record; written at once when `now` (a lead holds the
        agent to a budget), else with the next state or beat (a write is ~6 ms of fsync)."""
        with self._lock:
            record = self.record
            record.input_tokens += usage.input_tokens
            record.output_tokens += usage.output_tokens
            record.cost_usd = round(cost_usd, 6)
            record.context_tokens, record.context_window = context
        if now:
            self.write()

    def write(self, **fields: Any) -> None:
        state = fields.get("state", self.record.state)
        if (state == "working") != bool(self.record.busy_since):  # busy since its turn began; 0 once not working
            fields["busy_since"] = epoch_ms() if state == "working" else 0
        with self._lock:
            for key, value in fields.items():
                setattr(self.record, key, value)
            self._put(self.record)
            self._written = time.monotonic()

    def update(self, **fields: Any) -> None:
        """Set these fields; rewrite the record now if it was written before (else they go with its first write)."""
        with self._lock:
            for key, value in fields.items():
                setattr(self.record, key, value)
            if self._written and self.record.state != "exited":
                self._put(self.record)
                self._written = time.monotonic()

    def saw(self, event: AgentEvent) -> None:
        """The tool it runs now, for `status` (written with its next write or beat)."""
        if event.kind in ("tool_start", "tool_end"):
            self.record.current_tool = event.tool if event.kind == "tool_start" else None

    def came_round(self) -> None:
        """The idle loop is alive: a beat thread of its own keeps beating only while it keeps saying so."""
        self._came_round = time.monotonic()

    def beat(self, *, when_due: bool = False) -> bool:
        """Rewrite the record (`when_due`: only if a beat's time has passed since the last write); True if it did.
        No beat while it was never written, once it says exited, or from a stalled loop (it goes unresponsive)."""
        every = self.record.heartbeat_ms / 1000
        now = time.monotonic()
        stalled = self._came_round is not None and not self.in_turn and now - self._came_round > stall_after(every)
        with self._lock:
            due = now - self._written >= every or not when_due
            if not self._written or self.record.state == "exited" or stalled or not due:
                return False
            self._put(self.record)
            self._written = time.monotonic()
            return True


class SilenceWatch:
    """The lead's view of its teammates' beats: one whose process exists but has stopped beating is reported once,
    and once more when it beats again. Its tasks stay with it until their leases run out (team/lease_keeper.py): a
    stopped process may be resumed, and its late change to a task taken back meanwhile is then refused."""

    def __init__(self) -> None:
        self._silent: set[str] = set()

    def heard(self, name: str, presence: Presence | None) -> TeamEvent | None:
        silent = presence is not None and presence.liveness() == "unresponsive"
        if silent and presence is not None and name not in self._silent:
            self._silent.add(name)
            secs = presence.silent_ms() / 1000
            text = f"Teammate {name} has not responded for {secs:.0f}s (its process {presence.pid} still exists)"
            return TeamEvent("unresponsive", name, text + "; its tasks stay with it until their leases run out.")
        if not silent and name in self._silent:
            self._silent.discard(name)
            return TeamEvent("responsive", name, f"Teammate {name} responds again.")
        return None

    def check(self, read: Callable[[str], Presence | None], names: list[str]) -> list[TeamEvent]:
        """What there is to report about these teammates, their records read with `read`."""
        return [event for name in names if (event := self.heard(name, read(name))) is not None]

    def forget(self, name: str) -> None:
        self._silent.discard(name)


class LeadPresence:
    """The lead's own presence record (state, session, spending; beaten from its team thread) and its watch over its
    teammates' beats."""

    def __init__(self, store: Store, session_id: str, pane: str) -> None:
        self.store = store
        self.team: str | None = None  # where the record is written: the lead's team, once it has one
        self._own = OwnPresence(self._put, Presence(os.getpid(), session_id, backend="process", pane_id=pane))
        self._silence = SilenceWatch()

    @property
    def state(self) -> State:
        return self._own.record.state

    def write(self, team: str | None, state: State, session_id: str, spent: AgentAccount,
              context: tuple[int, int] = (0, 0)) -> None:  # fmt: skip
        """For `status` and the teammates: its pid, pane, state, session (a new one after /clear), spending and
        context use (tokens, window)."""
        self.team = team
        if team:
            self._own.write(state=state, session_id=session_id, input_tokens=spent.usage.input_tokens,
                            output_tokens=spent.usage.output_tokens, cost_usd=round(spent.cost_usd, 6),
                            context_tokens=context[0], context_window=context[1])  # fmt: skip

    def saw(self, event: AgentEvent) -> None:
        self._own.saw(event)

    def beat(self, team: str, teammates: list[str]) -> list[TeamEvent]:
        """Its own beat when due, and then what there is to report about its teammates' beats."""
        if self.team != team or not self._own.beat(when_due=True):
            return []
        if not judged(self.store.steady, 2 * interval() + 1.0):  # their beats could not reach a store that was away
            return []
        return self._silence.check(functools.partial(self.store.presence.read, team), teammates)

    def forget(self, name: str) -> None:
        self._silence.forget(name)

    def _put(self, record: Presence) -> None:
        if self.team:
            self.store.presence.write(self.team, LEAD_NAME, record)
