"""A live teammate's permission mode or model changed: the lead checks and sends it signed (`mode_set_request` /
`model_set_request`); ours take both, Claude Code 2.1.197 the mode; for what a real `claude` takes from no inbox the
lead restarts it with the change at its next pause (team/moderestart.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from agentteams import diagnostics
from agentteams.agent.permissions import parse_mode
from agentteams.errors import AgentTeamsError
from agentteams.model.aliases import resolve_model
from agentteams.store.atomicjson import now_iso
from agentteams.store.paths import LEAD_NAME
from agentteams.store.protocol import Message, ModelSetRequest, ModeSetRequest, parse_message
from agentteams.store.records import Envelope, Member
from agentteams.team.delivery import TeamEvent, mark_read
from agentteams.team.moderestart import ModeRestarts
from agentteams.tools.base import ToolInputError
from agentteams.tools.hooks import PERMISSION_MODES

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentteams.team.lead import LeadRuntime
    from agentteams.team.teammate import TeammateRuntime

What = Literal["mode", "model"]


def install(runtime: LeadRuntime) -> Callable[[str], None]:
    """Lend the lead's tools `set_teammate`; the chore that takes `agentteams set` requests on the team thread."""
    changes = LiveChanges(runtime)
    runtime.ctx.hooks.set_teammate = changes.change
    return changes.chore


class LiveChanges:
    """The lead's half: check a change, send it in the lead's (signed) voice, record it in the member entry."""

    def __init__(self, runtime: LeadRuntime) -> None:
        self.rt = runtime
        self.restarts = ModeRestarts(runtime)

    def change(self, name: str, what: What, value: str) -> str:
        """What the lead's model (or `agentteams set`) is told; ToolInputError (one line) when it cannot be done."""
        team = self.rt.team
        if not team:
            raise ToolInputError("You lead no team: there is no teammate to change.")
        config = self.rt.teams.read(team)
        member = config.member(name)
        if member is None or member.agent_id == config.lead_agent_id:
            raise ToolInputError(f"team {config.name} has no teammate {name!r}")
        ours = self._ours(config.name, member)
        if what == "mode":
            return self._mode(config.name, member, value, ours)
        return self._model(config.name, member, value, ours)

    def chore(self, team: str) -> None:
        """Each round of the team thread: restart the teammates whose change waited for a pause; answer the
        `agentteams set` requests waiting in the store."""
        self.restarts.tick(team)
        queue = self.rt.session.store.changes
        for request in queue.pending(team):
            said: list[str] = []  # what was done before a refusal is said with it: nothing is left unsaid
            try:
                for what, value in request.changes():
                    said.append(self.change(request.agent, what, value))
            except (AgentTeamsError, ToolInputError) as e:
                queue.answer(team, request, False, " ".join([*said, str(e)]))
                continue
            queue.answer(team, request, True, " ".join(said))
            self.rt.hooks(TeamEvent("notice", request.agent, f"agentteams set: {' '.join(said)}"))  # the person sees it

    def _mode(self, team: str, member: Member, mode: str, ours: bool) -> str:
        if mode not in PERMISSION_MODES:
            raise ToolInputError(f"unknown mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
        if mode == "bypassPermissions" and self.rt.session.policy.mode != "bypassPermissions":
            raise ToolInputError("A teammate cannot bypass permissions while you do not: choose another mode.")
        if not ours and self.rt.spawner.takes_lead_key:  # a real claude from 2.1.330: it would drop the frame
            return self.restarts.ask(team, member, mode=mode)
        self._send(team, member.name, ModeSetRequest(mode=mode, sender=LEAD_NAME))
        self.rt.teams.set_mode(team, member.name, mode)
        return f"{member.name}'s permission mode is now {mode}, from its next tool call."

    def _model(self, team: str, member: Member, name: str, ours: bool) -> str:
        try:
            model = resolve_model(name)
        except AgentTeamsError as e:
            raise ToolInputError(str(e)) from None
        if not ours:  # no Claude Code teammate takes a model from its inbox
            return self.restarts.ask(team, member, model=model)
        self._send(team, member.name, ModelSetRequest(model=model, sender=LEAD_NAME, timestamp=now_iso()))
        self.rt.teams.set_member_fields(team, member.name, model=model)
        return f"{member.name} uses {model} from its next turn on, with its conversation kept."

    def _send(self, team: str, name: str, msg: Message) -> None:
        self.rt.mailbox.send(team, name, msg.to_text(), sender=LEAD_NAME)  # signed: the lead holds its key

    def _ours(self, team: str, member: Member) -> bool:
        """An agentteams teammate rather than a real `claude`: in-process, started by a spawner that runs ours, or
        one that wrote its presence or its key (a team adopted from another lead)."""
        from agentteams.team.nodespawn import NodeSpawner  # the lead's side only: a teammate never imports them
        from agentteams.team.spawning import TmuxSpawner

        if member.backend_type == "in-process" or member.verify_key:
            return True
        spawner = self.rt.spawner.local if isinstance(self.rt.spawner, NodeSpawner) else self.rt.spawner
        if isinstance(spawner, TmuxSpawner) and spawner.runs_ours:
            return True
        return self.rt.store.presence.read(team, member.name) is not None


def take_change(rt: TeammateRuntime, env: Envelope, verdict: str, lead: str) -> bool:
    """The teammate's half, for each message it reads: True when `env` was a change (now applied, or ignored
    because the lead's signature is not on it), which then never reaches the model."""
    msg = parse_message(env.text)
    if not isinstance(msg, (ModeSetRequest, ModelSetRequest)):
        return False
    if not mark_read(rt.mailbox, rt.team, rt.name, [env]):
        rt._unmarked.add(env.identity)  # a full disk: never taken twice
    rt.trust.delivered([env])
    if verdict != "verified" or env.sender != lead:  # with no key from the lead nothing can prove it its word
        diagnostics.warning("%s: a %s from %s without the lead's signature: ignored", rt.name, msg.TYPE, env.sender)
        return True
    if isinstance(msg, ModeSetRequest):
        _set_mode(rt, msg.mode)
    else:
        try:
            rt.session.set_model(msg.model)
            rt.teams.set_member_fields(rt.team, rt.name, model=rt.session.model)
        except AgentTeamsError as e:
            diagnostics.warning("%s: cannot use model %s: %s", rt.name, msg.model, e)
    return True


def modes_mid_turn(rt: TeammateRuntime, inbox: list[Envelope]) -> None:
    """At a tool result in a turn: a mode change applies at once (the next tool call obeys it); a model change
    waits for the next turn, as other frames do."""
    frames = [e for e in inbox if e.identity not in rt._unmarked and isinstance(parse_message(e.text), ModeSetRequest)]
    if frames:
        config = rt._config()
        for env in frames:
            take_change(rt, env, rt.trust.judge(env, config), config.lead_name if config else LEAD_NAME)


def _set_mode(rt: TeammateRuntime, mode: str) -> None:
    started = rt.session.options.permission_mode
    if mode not in PERMISSION_MODES or (mode == "bypassPermissions" and started != mode):
        diagnostics.warning("%s: refusing a change to permission mode %r", rt.name, mode)
        return
    now = rt.session.policy.mode
    rt.mode_after_plan = (now if now != "plan" else rt.mode_after_plan) if mode == "plan" else mode
    rt.session.policy.mode = parse_mode(mode)
    rt.teams.set_mode(rt.team, rt.name, mode)
