"""A resumed lead and the live teammates that check the dead lead's signatures: a new process holds none of its
keys (they never leave memory), so each such teammate is restarted with its conversation resumed and a new key on
its command line at its next pause (idle, awaiting a plan verdict, or asking the lead for a permission)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.pids import pid_alive
from agentteams.store.paths import LEAD_NAME
from agentteams.store.protocol import PermissionRequest, parse_message
from agentteams.store.records import Member
from agentteams.team.delivery import TeamEvent, mark_read
from agentteams.team.spawn.base import Handle, SpawnRequest
from agentteams.team.spawn.options import settings_for
from agentteams.team.spawn.roster import relaunch_member

if TYPE_CHECKING:
    from agentteams.team.lead.runtime import LeadRuntime

STOP_WAIT = 5.0  # seconds an old process gets to leave once its pane is closed, before SIGKILL
PAUSED = ("idle", "awaiting_plan_approval")  # doing no work: a restart loses nothing
CARRY_ON = (
    "Your team lead was restarted, and restarted you with your conversation so that you can verify its messages "
    "again. A permission you were waiting for was not answered: carry on, retrying what needs it."
)


def relaunch(runtime: LeadRuntime, team: str, member: Member) -> Handle:
    """The same name, agent id and colour, its recorded cwd, model, mode and type, its session resumed, a new key."""
    session, spawner, keyring = runtime.session, runtime.spawner, runtime.store.keyring
    lead_key = keyring.new_lead_key(team, member.name) if spawner.takes_lead_key else None
    req = SpawnRequest(
        name=member.name, team=team, color=member.color or "blue", cwd=Path(member.cwd or session.options.cwd),
        parent_session_id=session.ctx.session_id, model=member.model or session.model,
        permission_mode=member.mode or "default", plan_mode_required=bool(member.plan_mode_required),
        agent_type=member.agent_type, lead_key=lead_key, settings=session.options.settings, resume=member.session_id,
        allowed_tools=list(member.allowed_tools or []), disallowed_tools=list(member.disallowed_tools or []),
    )  # fmt: skip
    req.settings = settings_for(session, req.cwd)  # another directory's teammate: that project's settings
    try:
        return relaunch_member(runtime.store.teams, team, member, lambda: spawner.spawn(req))
    except Exception:
        keyring.drop_lead_key(team, member.name)
        raise


@dataclass
class Rekeying:
    """The adopted teammates still to restart, looked at on every round of the lead's team thread."""

    runtime: LeadRuntime
    team: str
    waiting: dict[str, Member] = field(default_factory=dict)

    def wants(self, member: Member) -> bool:
        """Ours (it keeps a presence record) under a spawner that hands out keys: it is waited for; True if so."""
        if not self.runtime.spawner.takes_lead_key or self.runtime.store.presence.read(self.team, member.name) is None:
            return False
        if not member.session_id:
            diagnostics.warning("teammate %s recorded no session: it restarts without its conversation", member.name)
        self.waiting[member.name] = member
        return True

    def drop_asks(self, relaunched: list[str]) -> None:
        """Unanswered permission requests of teammates restarted now or later: an answer from this lead to the old
        process would be refused as unsigned, or reach a new one that never asked. A relaunched one is told to carry
        on (signed with its new key) and asks again; a waiting one is told when it restarts (see CARRY_ON)."""
        rt = self.runtime
        whose = {*self.waiting, *relaunched}
        asks = [e for e in rt.mailbox.unread(self.team, LEAD_NAME)
                if e.sender in whose and isinstance(parse_message(e.text), PermissionRequest)]  # fmt: skip
        if not asks:
            return
        mark_read(rt.mailbox, self.team, LEAD_NAME, asks)
        for name in sorted({e.sender for e in asks} & set(relaunched)):
            rt.mailbox.send(self.team, name, CARRY_ON, sender=LEAD_NAME)

    def tick(self, team: str) -> None:
        """Restart each waiting teammate that has paused; forget one that has gone (the lead's check reports it)."""
        for name, member in list(self.waiting.items()):
            presence = self.runtime.store.presence.read(team, name)
            if presence is None or presence.liveness() in ("exited", "dead") or name not in self.runtime.handles:
                del self.waiting[name]
            elif presence.state in PAUSED or presence.asking:
                del self.waiting[name]
                self._restart(team, member, presence.pid, asking=presence.asking)

    def _restart(self, team: str, member: Member, pid: int, *, asking: bool) -> None:
        rt, name = self.runtime, member.name
        if not restart(rt, team, member, pid):
            return
        if asking:  # signed with its new key: the note starts its turn, and its tool asks again
            rt.mailbox.send(team, name, CARRY_ON, sender=LEAD_NAME)
        rt.hooks(TeamEvent("notice", name, f"Teammate {name} was restarted with its conversation and a new key."))


def restart(rt: LeadRuntime, team: str, member: Member, pid: int | None) -> bool:
    """Stop a paused teammate (process `pid`) and start it again as `member` says, on the lead's team thread; False
    (and a warning) when it could not be started: the liveness check then reports it gone and frees its tasks."""
    name = member.name
    old = rt.handles.pop(name)  # out of the liveness check's sight while it is replaced
    with contextlib.suppress(Exception):
        rt.spawner.stop(old)
    if pid is not None:
        _wait_gone(pid)
    try:
        rt.handles[name] = relaunch(rt, team, member)
    except (AgentTeamsError, OSError) as e:
        diagnostics.warning("could not restart teammate %s: %s", name, e)
        rt.handles[name] = old
        return False
    return True


def _wait_gone(pid: int) -> None:
    """Until the old process has left (its transcript and presence written), SIGKILL after STOP_WAIT seconds."""
    deadline = time.monotonic() + STOP_WAIT
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if pid_alive(pid):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
