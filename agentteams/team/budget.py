"""Budgets: a teammate's (from its spawn call or settings) and the team's, in tokens and dollars. The lead's team
thread reads its teammates' presence records: at 80 % the lead and the person are told once, at 100 % the
teammate is asked to shut down, and stopped like a dead one if it has not left within a grace period."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentteams import diagnostics
from agentteams.settings.types import Settings
from agentteams.store.api import Store
from agentteams.store.paths import LEAD_NAME
from agentteams.store.presence import Presence
from agentteams.store.records import Member
from agentteams.team.budget_limit import Budget
from agentteams.team.delivery import TeamEvent
from agentteams.team.trust import LeadPromises
from agentteams.tools.base import ToolInputError

SETTINGS_KEY = "teamBudget"  # ours; Claude Code ignores keys it does not know
WARN_AT = 80  # percent
DEFAULT_GRACE = 30.0  # seconds a teammate asked to stop for its budget has to leave before it is stopped


@dataclass(frozen=True)
class TeamBudgets:
    """The `teamBudget` settings key: a default per teammate, the whole team's, and the grace period."""

    teammate: Budget = field(default_factory=Budget)
    team: Budget = field(default_factory=Budget)
    grace: float | None = None  # None: DEFAULT_GRACE


def _positive(raw: Any, where: str, *, whole: bool) -> float | None:
    if raw is None:
        return None
    ok = isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0 and math.isfinite(raw)
    if not ok or (whole and raw != int(raw)):
        kind = "a whole number" if whole else "a number"
        raise ValueError(f"{where} must be {kind} greater than 0, not {raw!r}")
    return float(raw)


def _budget(tokens: Any, usd: Any, names: tuple[str, str]) -> Budget:
    """A budget from two raw values; ValueError naming the field (`names`: tokens', dollars') of a bad one."""
    count = _positive(tokens, names[0], whole=True)
    return Budget(int(count) if count is not None else None, _positive(usd, names[1], whole=False))


def settings_budgets(settings: Settings) -> TeamBudgets:
    """`teamBudget: {teammateMaxTokens, teammateMaxUsd, maxTokens, maxUsd, graceSeconds}`; a bad value is one
    warning line and no limit (settings never stop a session from starting)."""
    raw = settings.merged.get(SETTINGS_KEY)
    if not isinstance(raw, dict):
        return TeamBudgets()
    try:
        grace = _positive(raw.get("graceSeconds"), f"{SETTINGS_KEY}.graceSeconds", whole=False)
        return TeamBudgets(
            _budget(
                raw.get("teammateMaxTokens"),
                raw.get("teammateMaxUsd"),
                (f"{SETTINGS_KEY}.teammateMaxTokens", f"{SETTINGS_KEY}.teammateMaxUsd"),
            ),
            _budget(raw.get("maxTokens"), raw.get("maxUsd"), (f"{SETTINGS_KEY}.maxTokens", f"{SETTINGS_KEY}.maxUsd")),
            grace,
        )
    except ValueError as e:
        diagnostics.warning("settings: %s; budgets ignored", e)
        return TeamBudgets()


def spawn_budget(args: dict[str, Any], settings: Settings) -> Budget:
    """A spawn call's `max_budget_tokens` / `max_budget_usd`, each else the settings' per-teammate default."""
    try:
        given = _budget(
            args.get("max_budget_tokens"), args.get("max_budget_usd"), ("max_budget_tokens", "max_budget_usd")
        )
    except ValueError as e:
        raise ToolInputError(str(e)) from None
    default = settings_budgets(settings).teammate
    return Budget(given.tokens or default.tokens, given.usd or default.usd)


def held(member: Member | None) -> bool:
    """Whether a member has a budget of its own: then it reports its spending after every model answer (for the
    team's budget, its heartbeat's writes and its turns' ends are soon enough)."""
    return member is not None and bool(member.budget_tokens or member.budget_usd)


def _spent(presence: Presence | None) -> tuple[int, float]:
    return (presence.input_tokens + presence.output_tokens, presence.cost_usd) if presence else (0, 0.0)


def spent_past(budget: Budget, records: list[Presence | None]) -> bool:
    """Whether these agents' spending, summed, has reached `budget` (never without a limit)."""
    percent = budget.percent(sum(_spent(r)[0] for r in records), sum(_spent(r)[1] for r in records))
    return percent is not None and percent >= 100


def figures(presence: Presence | None, budget: Budget) -> str:
    tokens, usd = _spent(presence)
    parts = [f"{tokens} of {budget.tokens} tokens"] if budget.tokens else []
    parts += [f"${usd:.4f} of ${budget.usd:.2f}"] if budget.usd else []
    return ", ".join(parts)


@dataclass
class BudgetLead:
    """What the watch needs of the lead: tell its model and the person, and stop a member like a dead one."""

    tell: Callable[[TeamEvent], None]  # a notice for the lead's model and a TeamEvent for the person
    promises: LeadPromises  # sends the shutdown request, whose approval the lead then honours
    force_stop: Callable[[str, str], None]  # (name, how): end its process and remove it as a dead teammate


class BudgetWatch:
    """The lead's watch over its teammates' spending; each warning and each shutdown request happens once."""

    def __init__(self, store: Store, settings: Settings, lead: BudgetLead) -> None:
        self.store = store
        self.lead = lead
        self.config = settings_budgets(settings)
        self.grace = self.config.grace or DEFAULT_GRACE
        self._warned: set[str] = set()
        self._asked: dict[str, float] = {}  # name -> monotonic time its budget shutdown request was sent
        self.watching = False  # some budget holds: the lead looks every round (a 2 s one could skip the 80 % mark)

    def tick(self, team: str, names: list[str]) -> None:
        self._warned &= {*names, "team"}  # a name that left and is spawned again starts afresh
        members = {m.name: m for m in self.store.teams.read(team).members}
        held = any(m.budget_tokens or m.budget_usd for m in members.values())
        self.watching = held or bool(self.config.team.tokens or self.config.team.usd or self._asked)
        if not self.watching:
            return  # no budget anywhere: no presence record read twice a second for nothing
        records = {n: self.store.presence.read(team, n) for n in [*names, LEAD_NAME]}
        for name in names:
            member = members.get(name)
            budget = Budget(member.budget_tokens, member.budget_usd) if member else Budget()
            self._check(team, name, budget, records[name], f"Teammate {name}")
        self._whole_team(team, names, list(records.values()))
        self._enforce(names)

    def _whole_team(self, team: str, names: list[str], records: list[Presence | None]) -> None:
        """The team's budget: every member's spending (the lead's too) summed; past it, every teammate is asked."""
        tokens, usd = sum(_spent(r)[0] for r in records), sum(_spent(r)[1] for r in records)
        total = Presence(0, "", "", input_tokens=tokens, cost_usd=usd)  # the team's spending as one record
        percent = self.config.team.percent(tokens, usd)
        if percent is None or percent < 100:
            self._check(team, "team", self.config.team, total, "The team")
            return
        said = figures(total, self.config.team)
        self._warn("team", f"The team has spent {percent}% of its budget ({said})")
        for name in names:
            self._ask(team, name, f"The team has used its whole budget ({said}).")

    def _check(self, team: str, name: str, budget: Budget, record: Presence | None, who: str) -> None:
        percent = budget.percent(*_spent(record))
        if percent is None or percent < WARN_AT:
            return
        self._warn(name, f"{who} has spent {percent}% of its budget ({figures(record, budget)})")
        if percent >= 100 and name != "team":
            self._ask(team, name, f"You have used your whole budget ({figures(record, budget)}).")

    def _warn(self, name: str, line: str) -> None:
        if name not in self._warned:
            self._warned.add(name)
            self.lead.tell(TeamEvent("budget", name, line + "."))

    def _ask(self, team: str, name: str, reason: str) -> None:
        if name in self._asked:
            return
        self.lead.promises.ask_shutdown(self.store.mail, team, name, reason)
        self._asked[name] = time.monotonic()
        self.lead.tell(TeamEvent("budget", name, f"Teammate {name} was asked to shut down: {reason}"))

    def _enforce(self, names: list[str]) -> None:
        now = time.monotonic()
        for name, asked in list(self._asked.items()):
            if name not in names:  # it left (approved, or died): nothing more to do
                self._asked.pop(name)
            elif now - asked >= self.grace:
                self._asked.pop(name)
                self.lead.force_stop(name, "was stopped (its budget ran out and it did not shut down in time)")
