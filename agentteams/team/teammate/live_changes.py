"""The teammate's half of its lead's live changes (the lead's half: team/lead/live_changes.py): a permission mode
or model change taken only with the lead's signature on it, and the mode it works in once its plan is approved."""

from __future__ import annotations

from collections.abc import Callable

from agentteams import diagnostics
from agentteams.agent.permissions.policy import parse_mode
from agentteams.agent.session import Session
from agentteams.errors import AgentTeamsError
from agentteams.store.api import Mail, Teams
from agentteams.store.paths import LEAD_NAME
from agentteams.store.protocol import ModelSetRequest, ModeSetRequest, parse_message
from agentteams.store.records import Envelope, TeamConfig
from agentteams.team.delivery import mark_read
from agentteams.team.trust import Trust
from agentteams.tools.runtime_hooks import PERMISSION_MODES


class LiveChanges:
    """Mode and model changes as the teammate reads them, between turns or (a mode) at a tool result."""

    def __init__(
        self, session: Session, mail: Mail, teams: Teams, team: str, name: str, trust: Trust,
        unmarked: set[tuple[str, ...]],
    ) -> None:  # fmt: skip
        self.session, self.mail, self.teams, self.team, self.name, self.trust = session, mail, teams, team, name, trust
        self._unmarked = unmarked  # the runtime's: taken, but the disk would not take the read marks
        started = session.options.permission_mode
        # after plan approval a plan-mode teammate works in the mode it was started with (never plan again)
        self.mode_after_plan = "default" if started == "plan" else started

    def take(self, env: Envelope, verdict: str, lead: str) -> bool:
        """A mode or model change, for each message it reads: True when `env` was a change (now applied, or ignored
        because the lead's signature is not on it), which then never reaches the model."""
        msg = parse_message(env.text)
        if not isinstance(msg, (ModeSetRequest, ModelSetRequest)):
            return False
        if not mark_read(self.mail, self.team, self.name, [env]):
            self._unmarked.add(env.identity)  # a full disk: never taken twice
        self.trust.delivered([env])
        if verdict != "verified" or env.sender != lead:  # with no key from the lead nothing can prove it its word
            diagnostics.warning(
                "%s: a %s from %s without the lead's signature: ignored", self.name, msg.TYPE, env.sender
            )
            return True
        if isinstance(msg, ModeSetRequest):
            self._set_mode(msg.mode)
        else:
            try:
                self.session.set_model(msg.model)
                self.teams.set_member_fields(self.team, self.name, model=self.session.model)
            except AgentTeamsError as e:
                diagnostics.warning("%s: cannot use model %s: %s", self.name, msg.model, e)
        return True

    def mid_turn(self, inbox: list[Envelope], config: Callable[[], TeamConfig | None]) -> None:
        """At a tool result in a turn: a mode change applies at once (the next tool call obeys it); a model change
        waits for the next turn, as other frames do. `config` is read only when there is a change."""
        frames = [
            e for e in inbox if e.identity not in self._unmarked and isinstance(parse_message(e.text), ModeSetRequest)
        ]
        if frames:
            team = config()
            for env in frames:
                self.take(env, self.trust.judge(env, team), team.lead_name if team else LEAD_NAME)

    def plan_approved(self, wanted: str | None) -> None:
        """The mode the approval names, or (none, plan, or one we do not know: a newer CLI's) the one it had before."""
        mode = wanted if wanted in PERMISSION_MODES and wanted != "plan" else self.mode_after_plan
        self.session.policy.mode = parse_mode(mode)
        self.teams.set_mode(self.team, self.name, mode)

    def _set_mode(self, mode: str) -> None:
        started = self.session.options.permission_mode
        if mode not in PERMISSION_MODES or (mode == "bypassPermissions" and started != mode):
            diagnostics.warning("%s: refusing a change to permission mode %r", self.name, mode)
            return
        now = self.session.policy.mode
        self.mode_after_plan = (now if now != "plan" else self.mode_after_plan) if mode == "plan" else mode
        self.session.policy.mode = parse_mode(mode)
        self.teams.set_mode(self.team, self.name, mode)
