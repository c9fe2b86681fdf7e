"""The demo's own ending when nobody watches: once its scenario is over (the demo team made, then deleted) and no
tmux client has been attached to its session for a while, it leaves as a person would (Ctrl-D in the lead pane).
Attached, it stays until Ctrl-D; a client that detaches later starts the wait again."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from agentteams.backends.tmux import TmuxBackend, TmuxError
from agentteams.errors import AgentTeamsError
from agentteams.store.api import Teams

LINGER_ENV = "AGENTTEAMS_DEMO_LINGER"  # seconds an unwatched demo stays after its scenario is over
DEFAULT_LINGER = 60.0
POLL = 1.0  # one tmux command a second: the session's clients (it fails once the session is gone)
LEAVE_WAIT = 15.0  # how long the lead may take to leave after Ctrl-D before its session is closed under it


def linger_seconds(environ: Mapping[str, str] = os.environ) -> float:
    """The wait after the scenario before an unwatched demo ends: AGENTTEAMS_DEMO_LINGER, else a minute."""
    raw = environ.get(LINGER_ENV, "").strip()
    if not raw:
        return DEFAULT_LINGER
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise AgentTeamsError(f"{LINGER_ENV}={raw!r}: give the seconds an unwatched demo stays after it ends (e.g. 60)")
    return seconds


@dataclass
class Reaper:
    """Watches the demo session `session` whose scenario runs team `team`."""

    tmux: TmuxBackend
    teams: Teams
    session: str
    team: str
    linger: float
    poll: float = POLL
    done_mark: str = ""  # the scenario's last words in the lead's pane: it is over even if we never saw its team

    def run(self, hang_up: Callable[[], None]) -> None:
        """Wait until the demo is over and unwatched, then leave; `hang_up` closes what a lead that stays leaves."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the lead pane interrupts the lead's turn, not us
        if self.wait_unwatched():
            self.leave(hang_up)

    def clients(self) -> list[str] | None:
        """The clients attached to the session; None once the session is gone."""
        try:
            return self.tmux.run("list-clients", "-t", f"={self.session}", "-F", "#{client_name}")
        except TmuxError:
            return None

    def wait_unwatched(self) -> bool:
        """True once the scenario is over and no client has been attached for `linger` seconds; False when the
        session ends first (the person pressed Ctrl-D)."""
        made = False
        quiet_since: float | None = None
        while (clients := self.clients()) is not None:
            exists = self.teams.exists(self.team)
            # a reaper started late (a loaded machine) can miss the whole life of the team: the lead's last words
            made = made or exists or self.shows_done()
            now = time.monotonic()
            if exists or not made or clients:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= self.linger:
                return True
            time.sleep(self.poll if quiet_since is None else min(self.poll, max(0.05, self.linger / 4)))
        return False

    def shows_done(self) -> bool:
        """Whether the lead's pane shows the scenario's last words."""
        if not self.done_mark:
            return False
        try:
            shown = self.tmux.run("capture-pane", "-p", "-J", "-S", "-200", "-t", f"={self.session}:lead")
        except TmuxError:
            return False
        return any(self.done_mark in line for line in shown)

    def leave(self, hang_up: Callable[[], None]) -> None:
        """Ctrl-D in the lead pane: the lead leaves and its window's command cleans up and closes the session."""
        try:
            self.tmux.run("send-keys", "-t", f"={self.session}:lead", "C-d")
        except TmuxError:
            return  # the session went meanwhile
        deadline = time.monotonic() + LEAVE_WAIT
        while time.monotonic() < deadline:
            if self.clients() is None:
                return
            time.sleep(self.poll / 4)
        hang_up()  # the lead did not go: its session is closed under it (it is hung up on)
