"""The lead's team hooks: TeammateSpawned and TeammateDied from its team events, TeamDeleted after a TeamDelete,
UserPromptSubmit on the person's prompt. A teammate's at its turn's end are team/teammate/idle_gate.py's."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from agentteams.agent.loop import AgentEvent
from agentteams.agent.session import Session
from agentteams.errors import AgentTeamsError
from agentteams.store.records import Envelope
from agentteams.team.delivery import TeamEvent, lead_turn_text


class LeadHooks:
    """Wraps the lead's team-event callback (the UI still gets every event first) and listens to its tools."""

    def __init__(self, session: Session, outer: Callable[[TeamEvent], None] | None = None) -> None:
        self.session = session
        self.hooks = session.hooks
        self.outer = outer or (lambda _e: None)
        session.listen(self._agent_event)

    def __call__(self, event: TeamEvent) -> None:
        """A team event: to the UI first, then TeammateSpawned / TeammateDied hooks."""
        self.outer(event)
        team = self.session.ctx.team_name
        if not team or event.kind not in ("joined", "died"):
            return
        agent_id = f"{event.agent}@{team}"  # the member's id in Claude Code's form, name@team
        if event.kind == "died":
            self.hooks.teammate_died(event.agent, team, agent_id, event.text)
            return
        member = None
        with contextlib.suppress(AgentTeamsError):
            member = self.session.store.teams.read(team).member(event.agent)
        agent_type = (member.agent_type or "") if member is not None else ""
        self.hooks.teammate_spawned(event.agent, team, agent_id, agent_type, event.text)

    def _agent_event(self, event: AgentEvent) -> None:
        result = event.result
        if event.kind == "tool_end" and event.tool == "TeamDelete" and result is not None and not result.is_error:
            team = (result.data or {}).get("team_name")
            if isinstance(team, str):
                self.hooks.team_deleted(team)

    def turn_text(self, notices: list[str], envs: list[Envelope], prompt: str | None) -> tuple[str | None, str | None]:
        """The lead turn's text after UserPromptSubmit hooks, or None when a hook dropped the prompt and nothing
        else waits; and the line saying why it was dropped (the turn's error), if it was."""
        blocked = None
        if prompt is not None:
            prompt, blocked = self.hooks.submitted(prompt)
            if blocked is not None:  # the REPL shows it where the answer would have been
                self.outer(TeamEvent("notice", "hook", blocked))
        if prompt is None and not envs and not notices:
            return None, blocked
        return lead_turn_text(notices, envs, prompt), blocked
