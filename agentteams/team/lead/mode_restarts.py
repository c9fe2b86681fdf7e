"""A change a real `claude` teammate takes from no inbox (a permission mode for Claude Code 2.1.330 and later, a
model for every version): the lead restarts it at its next pause, its own conversation resumed and the new mode or
model on its command line, as Claude Code itself applies them only at a teammate's start."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentteams.errors import AgentTeamsError
from agentteams.store.records import Member
from agentteams.team.delivery import TeamEvent
from agentteams.team.lead.rekey import restart
from agentteams.team.status_view import find_transcript

if TYPE_CHECKING:
    from agentteams.team.lead.runtime import LeadRuntime

WAIT_NOW = 15.0  # seconds a caller waits for a teammate that is idle now to be back in its new mode


@dataclass
class Pending:
    """One change waiting for its teammate's pause; `said` is what was done, once `done` is set."""

    name: str
    mode: str | None = None
    model: str | None = None
    done: threading.Event = field(default_factory=threading.Event)
    said: str = ""


class ModeRestarts:
    """The changes still to apply, looked at on every round of the lead's team thread (which alone restarts
    teammates, so its liveness check never sees one half-replaced)."""

    def __init__(self, runtime: LeadRuntime) -> None:
        self.rt = runtime
        self._lock = threading.Lock()
        self.waiting: dict[str, Pending] = {}

    def ask(self, team: str, member: Member, *, mode: str | None = None, model: str | None = None) -> str:
        """Queue the change; wait a little for it when asked off the team thread (an idle teammate is restarted
        within a round). What the lead's model, or `agentteams set`, is told."""
        with self._lock:
            older = self.waiting.get(member.name) or Pending(member.name)  # a change of the other kind is kept
            pending = Pending(member.name, mode or older.mode, model or older.model)
            self.waiting[member.name] = pending
        if threading.current_thread() is self.rt.team_thread:
            self.tick(team)
        else:
            pending.done.wait(WAIT_NOW)
        if pending.done.is_set():
            return pending.said
        return (
            f"{member.name} is a Claude Code teammate, which takes {_what(pending)} only when it starts: it is busy "
            f"now, and will be restarted with {_what(pending)} and its conversation as soon as it pauses."
        )

    def tick(self, team: str) -> None:
        """Restart each teammate with a change waiting that has paused: idle, with nothing unread."""
        with self._lock:
            waiting = list(self.waiting.values())
        for pending in waiting:
            member = self._member(team, pending.name)
            if member is None or pending.name not in self.rt.handles:
                self._finish(pending, f"{pending.name} left the team before {_what(pending)} could change.")
            elif member.is_active is False and not self.rt.mailbox.unread(team, pending.name):
                self._finish(pending, self._restart(team, member, pending))

    def _member(self, team: str, name: str) -> Member | None:
        with contextlib.suppress(AgentTeamsError):
            return self.rt.teams.read(team).member(name)
        return None

    def _finish(self, pending: Pending, said: str) -> None:
        with self._lock:
            if self.waiting.get(pending.name) is pending:
                del self.waiting[pending.name]
        pending.said = said
        pending.done.set()

    def _restart(self, team: str, member: Member, pending: Pending) -> str:
        rt, name, what = self.rt, member.name, _what(pending)
        session = member.session_id or _conversation(rt, team, name)
        if not session:
            return f"{name}'s conversation was not found, so it was not restarted: {what} unchanged."
        fields: dict[str, Any] = {"session_id": session, **({"mode": pending.mode} if pending.mode else {}),
                  **({"model": pending.model} if pending.model else {})}  # fmt: skip
        if not restart(rt, team, dataclasses.replace(member, **fields), rt.handles[name].pane_pid):
            return f"{name} could not be started again with {what}: see the warning."
        # resumed with nothing unread, a claude waits without a word: idle until a message starts its turn, which
        # it marks itself (it starts in about a second, well after this write)
        rt.teams.set_member_fields(team, name, **fields, is_active=False)
        rt.hooks(TeamEvent("notice", name, f"Teammate {name} was restarted with {what} and its conversation."))
        return f"{name} now has {what}: it was restarted with its conversation to take it."


def _what(pending: Pending) -> str:
    mode = f"permission mode {pending.mode}" if pending.mode else ""
    return " and ".join(s for s in (mode, f"model {pending.model}" if pending.model else "") if s)


def _conversation(rt: LeadRuntime, team: str, name: str) -> str | None:
    """The session a real `claude` teammate writes: its transcript, found by its name and team since it joined."""
    try:
        hit = find_transcript(rt.session.layout, rt.store, team, name)
    except AgentTeamsError:
        return None
    return hit.path.stem if hit.exact else None
