"""Restarting a teammate at its next pause, in one place: a dead one brought back (`Task` with `resume: true`), one
that needs a new key from a resumed lead, one whose permission mode or model a real `claude` takes only at its start.
Each keeps its name, agent id, colour and conversation; only the lead's team thread replaces a running teammate."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from agentteams.tools.base import ToolInputError

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentteams.agent.session import Session
    from agentteams.team.spawn.base import Spawner

STOP_WAIT = 5.0  # seconds an old process gets to leave once its pane is closed, before SIGKILL
PAUSED = ("idle", "awaiting_plan_approval")  # doing no work: a restart loses nothing
CARRY_ON = (
    "Your team lead was restarted, and restarted you with your conversation so that you can verify its messages "
    "again. A permission you were waiting for was not answered: carry on, retrying what needs it."
)


class Restarts:
    """The lead's one way to start a teammate again under its own name and conversation; it shares the lead's
    handles, and tells the person (and hooks) through `announce`."""

    def __init__(
        self, session: Session, spawner: Spawner, handles: dict[str, Handle], announce: Callable[[TeamEvent], None],
        on_team_thread: Callable[[], bool],
    ) -> None:  # fmt: skip
        self.session = session
        self.store = session.store
        self.spawner = spawner
        self.handles = handles
        self.announce = announce
        self.on_team_thread = on_team_thread  # only the team thread replaces a running teammate

    def relaunch(self, team: str, member: Member) -> Handle:
        """The same name, agent id and colour, its recorded cwd, model, mode and type, its session resumed, a new
        key."""
        session, spawner, keyring = self.session, self.spawner, self.store.keyring
        lead_key = keyring.new_lead_key(team, member.name) if spawner.takes_lead_key else None
        req = SpawnRequest(
            name=member.name, team=team, color=member.color or "blue", cwd=Path(member.cwd or session.options.cwd),
            parent_session_id=session.ctx.session_id, model=member.model or session.model,
            permission_mode=member.mode or "default", plan_mode_required=bool(member.plan_mode_required),
            agent_type=member.agent_type, lead_key=lead_key, settings=session.options.settings,
            resume=member.session_id, restricted=session.options.restricted,
            allowed_tools=list(member.allowed_tools or []), disallowed_tools=list(member.disallowed_tools or []),
        )  # fmt: skip
        req.settings = settings_for(session, req.cwd)  # another directory's teammate: that project's settings
        try:
            return relaunch_member(self.store.teams, team, member, lambda: spawner.spawn(req))
        except Exception:
            keyring.drop_lead_key(team, member.name)
            raise

    def restart(self, team: str, member: Member, pid: int | None) -> bool:
        """Stop a paused teammate (process `pid`) and start it again as `member` says, on the lead's team thread; False
        (and a warning) when it could not be started: the liveness check then reports it gone and frees its tasks."""
        name = member.name
        old = self.handles.pop(name)  # out of the liveness check's sight while it is replaced
        with contextlib.suppress(Exception):
            self.spawner.stop(old)
        if pid is not None:
            _wait_gone(pid)
        try:
            self.handles[name] = self.relaunch(team, member)
        except (AgentTeamsError, OSError) as e:
            diagnostics.warning("could not restart teammate %s: %s", name, e)
            self.handles[name] = old
            return False
        return True

    def revive(self, team: str, args: dict[str, Any]) -> str:
        """A teammate that died while this lead ran, back with its own conversation (`Task` with `resume: true`):
        the tool result; the prompt, if any, reaches the teammate as the lead's next message."""
        name = str(args.get("name") or "")
        if name in self.handles:
            return f"{name} is running in team {team}: there is nothing to resume. Send it a message instead."
        member = self.store.teams.return_member(team, name)
        if member is None:
            raise ToolInputError(f"No teammate named {name} died in team {team}: nothing to resume (spawn it anew).")
        if not member.session_id:
            diagnostics.warning("teammate %s recorded no session: it comes back without its conversation", name)
        try:
            self.handles[name] = self.relaunch(team, member)
        except (AgentTeamsError, OSError) as e:
            self.store.teams.depart_member(team, name)  # still departed: a later resume may succeed
            raise ToolInputError(f"Could not start {name} again: {e}") from e
        prompt = str(args.get("prompt") or "").strip()
        if prompt:
            self.store.mail.send(team, name, prompt, sender=LEAD_NAME)
        self.announce(TeamEvent("joined", name, f"{self.spawner.backend}, resumed", color=member.color))
        said = "with the prompt as your next message" if prompt else "idle until you send it a message"
        return f"{name} is back in team {team} with its own conversation ({member.agent_id}), {said}."


@dataclass
class Rekeying:
    """The adopted teammates still to restart, looked at on every round of the lead's team thread."""

    restarts: Restarts
    team: str
    waiting: dict[str, Member] = field(default_factory=dict)
    _turn: threading.RLock = field(default_factory=threading.RLock)  # one restart at a time, from either caller

    def wants(self, member: Member) -> bool:
        """Ours (it keeps a presence record) under a spawner that hands out keys: it is waited for, and what this lead
        writes to it waits for its restart (`Keyring.hold`); True if so."""
        if (
            not self.restarts.spawner.takes_lead_key
            or self.restarts.store.presence.read(self.team, member.name) is None
        ):
            return False
        if not member.session_id:
            diagnostics.warning("teammate %s recorded no session: it restarts without its conversation", member.name)
        self.waiting[member.name] = member
        self.restarts.store.keyring.hold(self.team, member.name, lambda: self._restart_if_paused(member.name))
        return True

    def drop_asks(self, relaunched: list[str]) -> None:
        """Unanswered permission requests of teammates restarted now or later: an answer from this lead to the old
        process would be refused as unsigned, or reach a new one that never asked. A relaunched one is told to carry
        on (signed with its new key) and asks again; a waiting one is told when it restarts (see CARRY_ON)."""
        mailbox = self.restarts.store.mail
        whose = {*self.waiting, *relaunched}
        asks = [e for e in mailbox.unread(self.team, LEAD_NAME)
                if e.sender in whose and isinstance(parse_message(e.text), PermissionRequest)]  # fmt: skip
        if not asks:
            return
        mark_read(mailbox, self.team, LEAD_NAME, asks)
        for name in sorted({e.sender for e in asks} & set(relaunched)):
            mailbox.send(self.team, name, CARRY_ON, sender=LEAD_NAME)

    def tick(self, team: str) -> None:
        """Restart each waiting teammate that has paused; forget one that has gone (the lead's check reports it)."""
        for name in list(self.waiting):
            self._restart_if_paused(name)

    def _restart_if_paused(self, name: str) -> None:
        """Restart `name` if it waits for its new key and has paused; called by the team thread's round and by a
        message to it that waits (`Keyring.hold`): one of them restarts it, once."""
        with self._turn:
            member = self.waiting.get(name)
            if member is None:
                return
            presence = self.restarts.store.presence.read(self.team, name)
            if presence is None or presence.liveness() in ("exited", "dead") or name not in self.restarts.handles:
                del self.waiting[name]
                self.restarts.store.keyring.release(self.team, name)
            elif presence.state in PAUSED or presence.asking:
                del self.waiting[name]
                self._restart(self.team, member, presence.pid, asking=presence.asking)

    def _restart(self, team: str, member: Member, pid: int, *, asking: bool) -> None:
        name = member.name
        if not self.restarts.restart(team, member, pid):
            self.restarts.store.keyring.release(team, name)
            return
        if asking:  # signed with its new key: the note starts its turn, and its tool asks again
            self.restarts.store.mail.send(team, name, CARRY_ON, sender=LEAD_NAME)
        self.restarts.announce(
            TeamEvent("notice", name, f"Teammate {name} was restarted with its conversation and a new key.")
        )


def _wait_gone(pid: int) -> None:
    """Until the old process has left (its transcript and presence written), SIGKILL after STOP_WAIT seconds."""
    deadline = time.monotonic() + STOP_WAIT
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if pid_alive(pid):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# -- a dead teammate brought back ----------------------------------------------------------------------------------

HINT = "To bring it back with its own conversation: the Task tool with its name, team_name and resume: true."


# -- a mode or model a real `claude` takes only at its start -------------------------------------------------------

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

    def __init__(self, restarts: Restarts) -> None:
        self.restarts = restarts
        self._lock = threading.Lock()
        self.waiting: dict[str, Pending] = {}

    def ask(self, team: str, member: Member, *, mode: str | None = None, model: str | None = None) -> str:
        """Queue the change; wait a little for it when asked off the team thread (an idle teammate is restarted
        within a round). What the lead's model, or `agentteams set`, is told."""
        with self._lock:
            older = self.waiting.get(member.name) or Pending(member.name)  # a change of the other kind is kept
            pending = Pending(member.name, mode or older.mode, model or older.model)
            self.waiting[member.name] = pending
        if self.restarts.on_team_thread():
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
            if member is None or pending.name not in self.restarts.handles:
                self._finish(pending, f"{pending.name} left the team before {_what(pending)} could change.")
            elif member.is_active is False and not self.restarts.store.mail.unread(team, pending.name):
                self._finish(pending, self._restart(team, member, pending))

    def _member(self, team: str, name: str) -> Member | None:
        with contextlib.suppress(AgentTeamsError):
            return self.restarts.store.teams.read(team).member(name)
        return None

    def _finish(self, pending: Pending, said: str) -> None:
        with self._lock:
            if self.waiting.get(pending.name) is pending:
                del self.waiting[pending.name]
        pending.said = said
        pending.done.set()

    def _restart(self, team: str, member: Member, pending: Pending) -> str:
        restarts, name, what = self.restarts, member.name, _what(pending)
        session = member.session_id or _conversation(restarts, team, name)
        if not session:
            return f"{name}'s conversation was not found, so it was not restarted: {what} unchanged."
        fields: dict[str, Any] = {"session_id": session, **({"mode": pending.mode} if pending.mode else {}),
                  **({"model": pending.model} if pending.model else {})}  # fmt: skip
        if not restarts.restart(team, dataclasses.replace(member, **fields), restarts.handles[name].pane_pid):
            return f"{name} could not be started again with {what}: see the warning."
        # resumed with nothing unread, a claude waits without a word: idle until a message starts its turn, which
        # it marks itself (it starts in about a second, well after this write)
        restarts.store.teams.set_member_fields(team, name, **fields, is_active=False)
        restarts.announce(TeamEvent("notice", name, f"Teammate {name} was restarted with {what} and its conversation."))
        return f"{name} now has {what}: it was restarted with its conversation to take it."


def _what(pending: Pending) -> str:
    mode = f"permission mode {pending.mode}" if pending.mode else ""
    return " and ".join(s for s in (mode, f"model {pending.model}" if pending.model else "") if s)


def _conversation(restarts: Restarts, team: str, name: str) -> str | None:
    """The session a real `claude` teammate writes: its transcript, found by its name and team since it joined."""
    from agentteams.team.status_view import find_transcript  # the status view's reader: off every lead's start

    try:
        hit = find_transcript(restarts.session.layout, restarts.store, team, name)
    except AgentTeamsError:
        return None
    return hit.path.stem if hit.exact else None
