"""What a teammate writes for its lead to read: its messages, its idle notice and its `isActive`. The last two are held
when a full or read-only disk (or a store away past its deadline) refuses them, and written again later
(team/held_writes.py): the lead takes its team for idle only once both are written."""

from __future__ import annotations

import functools

from agentteams import diagnostics
from agentteams.agent.prompts import Identity
from agentteams.errors import AgentTeamsError, NotFoundError
from agentteams.store.api import Mail, Teams
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.outages import StoreUnavailable
from agentteams.store.protocol import IdleNotification
from agentteams.team.held_writes import HeldWrites, refused
from agentteams.team.teammate.next_turn import TurnNotes


class ToLead:
    """The teammate's writes for its lead; `held` keeps, in order, what was refused."""

    def __init__(self, me: Identity, mail: Mail, teams: Teams) -> None:
        self.me, self.mail, self.teams = me, mail, teams
        self.team, self.name = me.team, me.name
        self.held = HeldWrites(me.name)  # its isActive and idle notice, if the disk refused them: written later

    def lead_name(self) -> str:
        try:
            return self.teams.read(self.team).lead_name
        except AgentTeamsError:
            return self.me.lead

    def send(self, text: str, *, hold: bool = False) -> None:
        """`hold`: a refused send raises (HeldWrites sends it again later) instead of being a warning."""
        try:
            self.mail.send(self.team, self.lead_name(), text, sender=self.name, color=self.me.color)
        except AgentTeamsError as e:
            if hold and refused(e):
                raise
            if isinstance(e, (NotFoundError, StoreUnavailable)):  # its team is gone (the loop stops it, the lead says
                # why), or its store is away past its deadline (it said so once)
                diagnostics.debug("%s: could not reach the lead: %s", self.name, e)
                return
            diagnostics.warning("%s: could not reach the lead: %s", self.name, e)

    def idle_notice(self, notes: TurnNotes, reason: str, failure: str | None, final: str | None) -> None:
        """The idle notice, with the turn's final text as `result` (as Claude Code 2.1.330 sends it)."""
        msg = IdleNotification(
            sender=self.name, timestamp=now_iso(), idle_reason=reason, summary=notes.peer_dm,
            completed_task_id=notes.completed_task, completed_status="resolved" if notes.completed_task else None,
            failure_reason=failure, result=final,
        )  # fmt: skip
        notice = functools.partial(self.send, msg.to_text(), hold=True)
        self.held.write("idle notice", notice, "inbox", f"{self.name}'s idle notice to its lead")

    def set_active(self, active: bool) -> None:
        """A full or read-only disk holds it: the lead takes the team for idle only once it is written."""
        put = functools.partial(self._put_active, active)
        self.held.write("isActive", put, "team files", f"of team {self.team}")

    def _put_active(self, active: bool) -> None:
        try:
            self.teams.set_active(self.team, self.name, active)
        except AgentTeamsError as e:  # removed from the team: the loop notices and stops
            if refused(e):
                raise
            diagnostics.debug("%s: could not set isActive: %s", self.name, e)
