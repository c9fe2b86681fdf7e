"""A resumed lead takes its team back (`LeadRuntime.resume_team`): found by `leadSessionId`, re-stamped with this
process, its live teammates adopted as they run (ours restarted with a new key at their next pause), its dead ones
relaunched with their own sessions resumed."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.pids import LeadProcess
from agentteams.store.api import Mail, Store
from agentteams.store.fs.atomic_json import epoch_ms
from agentteams.store.paths import LEAD_NAME
from agentteams.store.protocol import PlanApprovalRequest, parse_message, plan_digest
from agentteams.store.records import Member, TeamConfig
from agentteams.team.lead.restarts import Rekeying, Restarts
from agentteams.team.spawn.base import Handle
from agentteams.team.teammate.lead_watch import lead_running
from agentteams.team.trust import LeadPromises


@dataclass
class Adopted:
    team: str
    live: list[str] = field(default_factory=list)
    rekeyed: list[str] = field(default_factory=list)  # live, restarted with a new key at their next pause
    relaunched: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # could not be started: the lead's check removes them
    reopened: list[str] = field(default_factory=list)  # the dead ones' unfinished tasks, pending again

    def news(self) -> str:
        said = [f"You were resumed and lead team {self.team} again."]
        if self.live:
            said.append(f"Still running (they carried on without you): {', '.join(self.live)}.")
        if self.rekeyed:
            said.append(f"Restarted with their conversations kept once each pauses, so that they can verify your "
                        f"messages again: {', '.join(self.rekeyed)}.")  # fmt: skip
        if self.relaunched:
            said.append(f"Restarted with their own conversations: {', '.join(self.relaunched)}.")
        if self.reopened:
            said.append(f"Their unfinished tasks are pending again: {', '.join(self.reopened)}.")
        if self.lost:
            said.append(f"Could not be restarted: {', '.join(self.lost)}.")
        return "[team] " + " ".join(said)


def team_of(store: Store, session_id: str) -> str | None:
    """The team this session leads (its config's `leadSessionId`), if any still stands."""
    for config in store.teams.list_teams():
        if isinstance(config, TeamConfig) and config.lead_session_id == session_id:
            return config.name
    return None


@dataclass(frozen=True)
class Claimed:
    """A dead lead's team, taken by this process: its config (re-stamped with this session) and when the dead lead
    last wrote its presence (ms; 0: never)."""

    config: TeamConfig
    last_seen_ms: int


def claim(store: Store, session_id: str) -> Claimed | None:
    """Lead the team this session led again, re-stamped with this session and process; None when it led none, or
    its lead still runs, or another process took it first (each said in a warning)."""
    team = team_of(store, session_id)
    if team is None:
        return None

    def stamp(config: TeamConfig) -> TeamConfig:
        config.lead_session_id = session_id
        return config

    before, recorded = store.presence.read(team, LEAD_NAME), store.teams.read(team)
    if lead_running(store, team, recorded):  # e.g. `-c` in a second terminal: one lead per team
        diagnostics.warning("team %s still has its lead running: this session goes on without the team", team)
        return None
    if not store.teams.claim_lead(team, LeadProcess.for_this_process(epoch_ms()), expected=recorded.lead_process):
        diagnostics.warning("another process took the lead of team %s first: this session goes on without it", team)
        return None
    return Claimed(store.teams.update(team, stamp), before.updated_at if before is not None else 0)


def take_team(restarts: Restarts, mail: Mail, promises: LeadPromises, config: TeamConfig) -> tuple[Adopted, Rekeying]:
    """Every member but the lead taken back (`take_back`), the plans it was sent known again, and the permission
    requests of those restarted dropped; and those still to restart at their next pause (`Rekeying.waiting`)."""
    done = Adopted(config.name)
    rekeying = Rekeying(restarts, config.name)
    for member in config.members:
        if member.agent_id != config.lead_agent_id:
            take_back(restarts, config.name, member, done, rekeying)
    plans_seen(mail, promises, config.name)
    rekeying.drop_asks(done.relaunched)
    return done, rekeying


def plans_seen(mailbox: Mail, promises: LeadPromises, team: str) -> None:
    """Plans the dead lead's model read but did not answer are in its conversation: their digests are known
    again, so its approval names the plan the teammate waits on (unread ones come in with the inbox)."""
    for env in mailbox.read_live(team, LEAD_NAME):
        msg = parse_message(env.text)
        if isinstance(msg, PlanApprovalRequest) and env.read:
            promises.plan_seen(msg.request_id, plan_digest(msg.plan_content))


def take_back(restarts: Restarts, team: str, member: Member, done: Adopted, rekeying: Rekeying) -> None:
    """A member of the adopted team: kept as it runs (rekeyed at its next pause when it checks the dead lead's key),
    or started again with its own conversation, its unfinished tasks pending again."""
    spawner, store, handles = restarts.spawner, restarts.store, restarts.handles
    old = Handle(member.name, spawner.backend, pane_id=member.tmux_pane_id or "")
    if spawner.backend == "tmux" and _running(restarts, team, old):
        handles[member.name] = old  # it sees our presence record and carries on
        if rekeying.wants(member):  # it checks the dead lead's key: this process never held it
            done.rekeyed.append(member.name)
        else:
            done.live.append(member.name)
        return
    with contextlib.suppress(Exception):
        spawner.stop(old)  # a pane left open by remain-on-exit
    store.presence.remove(team, member.name)  # its old record says dead: not news about the new process
    moved = store.tasks.unassign_all(team, member.name, member.agent_id)  # its turn died with it: open again
    done.reopened += [f"#{t.id}" for t in moved.tasks]
    try:
        handles[member.name] = restarts.relaunch(team, member)
        done.relaunched.append(member.name)
    except (AgentTeamsError, OSError) as e:
        diagnostics.warning("could not restart teammate %s: %s", member.name, e)
        handles[member.name] = old  # the liveness check reports it gone and frees its tasks
        done.lost.append(member.name)


def _running(restarts: Restarts, team: str, old: Handle) -> bool:
    """Ours by its presence record (its pane may be on a tmux server this lead cannot see: never start a second
    one); a real `claude` teammate, which keeps no record, by its pane."""
    presence = restarts.store.presence.read(team, old.name)
    if presence is not None:
        return presence.liveness() not in ("exited", "dead")
    return bool(old.pane_id) and restarts.spawner.alive(old, team)
