"""A teammate's watch on its lead: gone (its process died), back (a resumed lead runs), and the grace period
a teammate waits idle for a lead to come back before it stops."""

from __future__ import annotations

import os
import time
from typing import Literal

from agentteams.store.api import Store
from agentteams.store.records import TeamConfig

GRACE_ENV = "AGENTTEAMS_LEAD_GRACE_SECONDS"
DEFAULT_GRACE = 600.0  # ten minutes: long enough to restart a crashed lead with `agentteams -c`
CHECK_EVERY = 2.0  # seconds between looks at the lead's process

LeadState = Literal["here", "gone", "over"]  # over: gone for longer than the grace period


def grace() -> float:
    """Seconds a teammate waits for a dead lead to come back: AGENTTEAMS_LEAD_GRACE_SECONDS, else ten minutes."""
    try:
        return max(0.0, float(os.environ.get(GRACE_ENV, DEFAULT_GRACE)))
    except ValueError:
        return DEFAULT_GRACE


def lead_gone(store: Store, team: str, config: TeamConfig) -> bool:
    """True when the lead's process is known to have died: ours by its presence record, a real `claude` lead
    (2.1.330) by the config's `leadProcess`; an older real lead records neither."""
    lead = store.presence.read(team, config.lead_name)
    if lead is not None:
        return lead.liveness() in ("exited", "dead")
    recorded = config.lead_process
    return recorded is not None and recorded.is_gone() is True


def lead_running(store: Store, team: str, config: TeamConfig) -> bool:
    """True when a lead process is known to run (a resumed lead must not take the team from it)."""
    lead = store.presence.read(team, config.lead_name)
    if lead is not None:
        return lead.liveness() not in ("exited", "dead")
    recorded = config.lead_process
    return recorded is not None and recorded.is_gone() is False


class LeadWatch:
    """Looked at once per teammate loop round; the lead's process is checked at most every CHECK_EVERY seconds."""

    def __init__(self, store: Store, team: str) -> None:
        self.store, self.team = store, team
        self.every = CHECK_EVERY
        self.grace = grace()
        self._checked = 0.0
        self.gone_since: float | None = None  # monotonic time the lead was first seen gone

    def state(self, config: TeamConfig) -> LeadState:
        now = time.monotonic()
        if now - self._checked >= self.every:
            self._checked = now
            gone = lead_gone(self.store, self.team, config)
            if not gone:
                self.gone_since = None
            elif self.gone_since is None:
                self.gone_since = now
        if self.gone_since is None:
            return "here"
        return "over" if now - self.gone_since >= self.grace else "gone"
