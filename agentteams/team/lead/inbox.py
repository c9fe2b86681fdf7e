"""The lead's inbox, read by its team thread: each new message judged (team/trust.py), then handled here (a shutdown's
answer, an idle notice, a plan, a permission request) or queued for the model, and marked read once dealt with."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.store.api import Mail, Teams
from agentteams.store.paths import LEAD_NAME
from agentteams.store.protocol import (
    IdleNotification,
    PermissionRequest,
    PlanApprovalRequest,
    ShutdownApproved,
    ShutdownRejected,
    parse_message,
    plan_digest,
)
from agentteams.store.records import Envelope
from agentteams.team.delivery import TeamEvent, mark_read
from agentteams.team.lead.permission_relay import TeammateAsks
from agentteams.team.lead.turn_queue import TurnQueue
from agentteams.team.spawn.roster import Roster
from agentteams.team.trust import LeadPromises, Trust


class LeadInbox:
    """Reads the lead's unread messages once each (a message seen is never handled twice, even if its read mark
    failed). `lock` is held for a whole read: the team thread and `shutdown_team` both read, and a liveness check
    reads under it before it takes a teammate for dead."""

    def __init__(
        self, mail: Mail, teams: Teams, queue: TurnQueue, *, team: Callable[[], str | None], trust: Trust,
        promises: LeadPromises, roster: Roster, asks: TeammateAsks, on_event: Callable[[TeamEvent], None],
        member_gone: Callable[[str, str], None],
    ) -> None:  # fmt: skip
        self.mail, self.teams, self.queue, self._team = mail, teams, queue, team
        self.trust, self.promises, self.roster, self.asks = trust, promises, roster, asks
        self._event = on_event  # the person sees what came (and hooks hear of it)
        self._member_gone = member_gone  # (name, how): a teammate that approved its shutdown leaves the team
        self.lock = threading.RLock()
        self._seen: set[tuple[str, ...]] = set()

    def process(self) -> None:
        team = self._team()
        if not team:
            return
        with self.lock:
            handled: list[Envelope] = []
            config = None
            for env in self.mail.unread(team, LEAD_NAME):
                if env.identity in self._seen:
                    continue
                self._seen.add(env.identity)
                if config is None:
                    with contextlib.suppress(AgentTeamsError):
                        config = self.teams.read(team)
                if self._handle(env, self.trust.judge(env, config) == "forged"):
                    handled.append(env)
            if handled:
                mark_read(self.mail, team, LEAD_NAME, handled)
                self.trust.delivered(handled)

    def _handle(self, env: Envelope, forged: bool) -> bool:
        """React to one message; True when it is dealt with here (not for the model). A forged one only goes to
        the model, marked: it answers, approves and reports nothing."""
        msg = None if forged else parse_message(env.text)
        who = env.sender
        if isinstance(msg, ShutdownRejected):
            self.promises.answered(who, msg.request_id)
        if isinstance(msg, ShutdownApproved):
            with self.queue.cond:  # taken and gone in one step: `settled` never sees an approval without its departure
                if not self.promises.take_approval(who, msg.request_id):
                    diagnostics.warning("%s approved a shutdown never asked of it (%s); ignored", who, msg.request_id)
                    return True
                self._member_gone(who, "shut down (approved the shutdown request)")
                return self._for_model(env, forged)  # the notice and the approval in the same turn
        if isinstance(msg, PlanApprovalRequest):
            self.promises.plan_seen(msg.request_id, plan_digest(msg.plan_content))
        if isinstance(msg, IdleNotification):
            if not self.roster.present(who):  # a teammate that has left (e.g. a real CLI's notice after approving)
                return True
            self.queue.idle_notice(env, msg)
            self._event(TeamEvent("idle", who, msg.summary or msg.result or "", color=env.color))
            return True
        if isinstance(msg, PermissionRequest):  # a person may take minutes: the team thread goes on meanwhile
            self.asks.start(self._team() or "", msg, who)
            return True
        return self._for_model(env, forged)

    def _for_model(self, env: Envelope, forged: bool) -> bool:
        who = env.sender
        with self.queue.cond:  # reentrant: a shutdown approval's caller holds it already
            shown = f"[unverified: not signed by {who}] {env.text}" if forged else env.text  # the person sees it too
            self._event(TeamEvent("message", who, shown, color=env.color, summary=env.summary))
            return not self.queue.message(env)  # muted: dealt with here
