"""What waits for the lead's model (the person's prompts, teammates' messages and idle notices, the runtime's notices,
other sessions' words) and whether a turn runs: one condition guards it all, and the lead's worker waits on it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from agentteams.agent.session import TurnExtras
from agentteams.errors import AgentTeamsError
from agentteams.store.protocol import IdleNotification
from agentteams.store.records import Envelope
from agentteams.team.delivery import add_idle_notice
from agentteams.team.steering import Turn, take_plain

IDLE_RECHECK = 1.0  # seconds between looks at whether the team is idle while idle notices wait for it


@dataclass(frozen=True)
class NextTurn:
    """What one turn takes from the queue."""

    turn: Turn
    idle: list[Envelope]  # idle notices the model has not seen yet
    heard: list[str]  # other sessions' words


@dataclass(frozen=True)
class Meanwhile:
    """What came while a turn ran, taken at a tool result (team/steering.py)."""

    prompts: list[str]
    envs: list[Envelope]
    notices: list[str]
    heard: list[str]


class TurnQueue:
    """The lead's queue for its model. `cond` is reentrant: the runtime holds it around steps that must look like one
    to `settled` (a shutdown approval and its departure), and the queue's own methods take it again inside."""

    def __init__(self, team_idle: Callable[[], bool]) -> None:
        self.cond = threading.Condition()
        self._team_idle = team_idle  # every teammate between turns: only then do idle notices start a turn
        self._prompts: list[tuple[str, TurnExtras | None]] = []  # (prompt, what its turn alone gets)
        self._envs: list[Envelope] = []  # teammate messages for the model, not yet delivered
        self._notices: list[str] = []  # things the runtime tells the model (a teammate left, died, ...)
        self._idle: list[Envelope] = []  # idle notices the model has not seen yet
        self._heard: list[str] = []  # from other sessions (agent/peers.py): for the model as they are
        self.running = False  # a turn runs (read unlocked too: a presence write's hint)
        self.closing = False  # the runtime is closing: the worker and the team thread end
        self.held = False  # a team file's lead: teammates' news waits for its first prompt (the instructions)
        self.muted = False  # while shutting the team down, departures are not news for the model

    # -- what the lead's runtime asks -----------------------------------------------------------------

    @property
    def busy(self) -> bool:
        with self.cond:
            return self.running or bool(self._prompts)

    def quiet(self) -> bool:
        """No turn runs and nothing waits to start one."""
        with self.cond:
            return not (self.running or self._prompts or self._pending())

    def wait_quiet(self, timeout: float | None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.cond:
            while self.running or self._prompts or self._pending():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self.cond.wait(left)
            return True

    def wait_change(self, timeout: float) -> None:
        with self.cond:
            self.cond.wait(timeout)

    def between_turns(self, command: str, change: Callable[[], str]) -> str:
        with self.cond:  # the worker takes no turn meanwhile
            if self.running or self._prompts:
                raise AgentTeamsError(f"a turn is under way: wait for it to end (or press Ctrl-C), then {command}")
            return change()

    def _pending(self) -> bool:
        team_news = bool(self._idle and self._team_idle())
        return bool(self._heard or self._envs or self._notices or team_news)

    # -- what comes in ----------------------------------------------------------------------------------

    def prompt(self, prompt: str, extras: TurnExtras | None) -> None:
        with self.cond:
            self._prompts.append((prompt, extras))
            self.held = False
            self.cond.notify_all()

    def hear(self, text: str) -> None:
        with self.cond:
            self._heard.append(text)
            self.cond.notify_all()

    def message(self, env: Envelope) -> bool:
        """A teammate's message for the model; False when muted (the team is being shut down)."""
        with self.cond:
            if self.muted:
                return False
            self._envs.append(env)
            self.cond.notify_all()
        return True

    def idle_notice(self, env: Envelope, msg: IdleNotification) -> None:
        with self.cond:
            self._idle = add_idle_notice(self._idle, env, msg)
            self.cond.notify_all()

    def notice(self, text: str) -> None:
        with self.cond:
            self._notices.append(text)
            self.cond.notify_all()

    def gone(self, name: str, notice: str) -> None:
        """A teammate left or died: its idle notices are no news, its departure is (unless muted)."""
        with self.cond:
            self._idle = [e for e in self._idle if e.sender != name]
            if not self.muted:
                self._notices.append(notice)
            self.cond.notify_all()

    def team_ended(self, text: str) -> None:
        """The team is gone: no idle notice of it is news, the reason is."""
        with self.cond:
            self._idle = []
            self._notices.append(text)
            self.cond.notify_all()

    # -- what the worker takes ----------------------------------------------------------------------------

    def next_turn(self) -> NextTurn | None:
        """Wait for a turn's reason and take it all (the turn then runs); None once closed."""
        with self.cond:
            while not self.closing and not self._prompts and (self.held or not self._pending()):
                # idle notices wait for the whole team to be idle, which a teammate's own isActive write says
                # (written after its notice when a full disk held both): looked at again each second, not only
                # when news comes
                self.cond.wait(IDLE_RECHECK if self._idle else None)
            if self.closing:
                return None
            prompt, extras = self._prompts.pop(0) if self._prompts else (None, None)
            turn = Turn(prompt, self._envs, self._notices, extras)
            idle, self._envs, self._notices, self._idle = self._idle, [], [], []
            heard, self._heard = self._heard, []
            self.running = True
        return NextTurn(turn, idle, heard)

    def turn_ended(self) -> None:
        with self.cond:
            self.running = False
            self.cond.notify_all()

    def meanwhile(self) -> Meanwhile:
        """At a tool result of a running turn: the plain prompts, messages, notices and words that came meanwhile."""
        with self.cond:
            taken = Meanwhile(take_plain(self._prompts), self._envs, self._notices, self._heard)
            self._envs, self._notices, self._heard = [], [], []
        return taken

    def close(self) -> None:
        with self.cond:
            self.closing = True
            self.cond.notify_all()
