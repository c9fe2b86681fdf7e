"""A live teammate's permission mode or model changed, the lead's half: checked and sent signed (`mode_set_request` /
`model_set_request`; ours take both, Claude Code 2.1.197 the mode); what a real `claude` takes from no inbox, the lead
restarts it with at its next pause. The teammate's half is team/teammate/live_changes.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from agentteams.errors import AgentTeamsError
from agentteams.model.aliases import known_model
from agentteams.store.fs.atomic_json import now_iso
from agentteams.store.paths import LEAD_NAME
from agentteams.store.protocol import Message, ModelSetRequest, ModeSetRequest
from agentteams.store.records import Member
from agentteams.team.delivery import TeamEvent
from agentteams.team.lead.restarts import ModeRestarts, Restarts
from agentteams.tools.base import ToolInputError
from agentteams.tools.runtime_hooks import PERMISSION_MODES

if TYPE_CHECKING:
    from collections.abc import Callable


What = Literal["mode", "model"]


class LiveChanges:
    """The lead's half: check a change, send it in the lead's (signed) voice, record it in the member entry."""

    def __init__(self, restarts: Restarts, team: Callable[[], str | None]) -> None:
        self.session, self.store, self.spawner = restarts.session, restarts.store, restarts.spawner
        self.announce = restarts.announce
        self.team = team  # the team the lead leads now (None before TeamCreate)
        self.restarts = ModeRestarts(restarts)
        session = restarts.session
        session.ctx.hooks.set_teammate = self.change  # lent to the lead's tools

    def change(self, name: str, what: What, value: str) -> str:
        """What the lead's model (or `agentteams set`) is told; ToolInputError (one line) when it cannot be done."""
        team = self.team()
        if not team:
            raise ToolInputError("You lead no team: there is no teammate to change.")
        config = self.store.teams.read(team)
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
        queue = self.store.changes
        for request in queue.pending(team):
            said: list[str] = []  # what was done before a refusal is said with it: nothing is left unsaid
            try:
                for what, value in request.changes():
                    said.append(self.change(request.agent, what, value))
            except (AgentTeamsError, ToolInputError) as e:
                queue.answer(team, request, False, " ".join([*said, str(e)]))
                continue
            queue.answer(team, request, True, " ".join(said))
            self.announce(TeamEvent("notice", request.agent, f"agentteams set: {' '.join(said)}"))  # the person sees it

    def _mode(self, team: str, member: Member, mode: str, ours: bool) -> str:
        if mode not in PERMISSION_MODES:
            raise ToolInputError(f"unknown mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
        if mode == "bypassPermissions" and self.session.policy.mode != "bypassPermissions":
            raise ToolInputError("A teammate cannot bypass permissions while you do not: choose another mode.")
        if not ours and self.spawner.takes_lead_key:  # a real claude from 2.1.330: it would drop the frame
            return self.restarts.ask(team, member, mode=mode)
        self._send(team, member.name, ModeSetRequest(mode=mode, sender=LEAD_NAME))
        self.store.teams.set_mode(team, member.name, mode)
        return f"{member.name}'s permission mode is now {mode}, from its next tool call."

    def _model(self, team: str, member: Member, name: str, ours: bool) -> str:
        try:
            model = known_model(name)  # a team member's model is checked as the team file's are
        except AgentTeamsError as e:
            raise ToolInputError(str(e)) from None
        if not ours:  # no Claude Code teammate takes a model from its inbox
            return self.restarts.ask(team, member, model=model)
        self._send(team, member.name, ModelSetRequest(model=model, sender=LEAD_NAME, timestamp=now_iso()))
        self.store.teams.set_member_fields(team, member.name, model=model)
        return f"{member.name} uses {model} from its next turn on, with its conversation kept."

    def _send(self, team: str, name: str, msg: Message) -> None:
        self.store.mail.send(team, name, msg.to_text(), sender=LEAD_NAME)  # signed: the lead holds its key

    def _ours(self, team: str, member: Member) -> bool:
        """An agentteams teammate rather than a real `claude`: in-process, started by a spawner that runs ours, or
        one that wrote its presence or its key (a team adopted from another lead)."""
        from agentteams.team.nodes.spawner import NodeSpawner  # the lead's side only: a teammate never imports them
        from agentteams.team.spawn.spawners import TmuxSpawner

        if member.backend_type == "in-process" or member.verify_key:
            return True
        spawner = self.spawner.local if isinstance(self.spawner, NodeSpawner) else self.spawner
        if isinstance(spawner, TmuxSpawner) and spawner.runs_ours:
            return True
        return self.store.presence.read(team, member.name) is not None
