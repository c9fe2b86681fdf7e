"""A teammate's budgets held after every model answer: its own (the spawn's `max_budget_tokens` / `max_budget_usd`, or
the settings' per-teammate default) and its team's (`teamBudget`). Past either, its turn stops at the next tool
boundary, as `--max-budget-usd` stops a session; the lead's watch (team/budget.py) then asks it to shut down."""

from __future__ import annotations

from collections.abc import Callable

from agentteams.settings.types import Settings
from agentteams.store.api import Store
from agentteams.store.presence import Presence
from agentteams.store.records import Member, TeamConfig
from agentteams.team.budget import settings_budgets, spent_past
from agentteams.team.budget_limit import Budget


class BudgetStop:
    """The teammate loop's `over_budget`: what the session already had (its own `--max-budget-usd`), then ours."""

    def __init__(
        self, store: Store, team: str, own: Presence, settings: Settings, prior: Callable[[], bool] | None
    ) -> None:  # fmt: skip
        self.store, self.team, self.own, self.prior = store, team, own, prior
        self.limit = Budget()
        self.team_limit = settings_budgets(settings).team
        self.members: list[str] = []
        self.me = ""
        self.answering_shutdown = False  # a turn on the lead's shutdown request may still answer it

    def update(self, me: Member, config: TeamConfig) -> None:
        """Its budget and its team's members, as the config says now (read each time round the loop)."""
        self.limit, self.me = Budget(me.budget_tokens, me.budget_usd), me.name
        self.members = [m.name for m in config.members]

    def __call__(self) -> bool:
        if self.prior is not None and self.prior():
            return True
        if self.answering_shutdown:
            return False
        if spent_past(self.limit, [self.own]):  # its record holds this answer's usage already (the loop emits first)
            return True
        if not (self.team_limit.tokens or self.team_limit.usd):
            return False
        records = [self.own if n == self.me else self.store.presence.read(self.team, n) for n in self.members]
        return spent_past(self.team_limit, records)
