"""What each agent of a lead's team has spent (the REPL's /cost): the lead and its subagents from this process's
ledger, each teammate from its transcript, whose assistant entries carry `model` and `usage` as Claude Code's do,
so a teammate in another process (or one that has already left) counts too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agentteams.errors import AgentTeamsError, UnsafePathError
from agentteams.model.pricing import AgentAccount, UsageLedger
from agentteams.model.types import Usage
from agentteams.store.api import Store
from agentteams.store.fs import safe_paths
from agentteams.store.paths import Layout
from agentteams.team.status_view import find_transcript


@dataclass(frozen=True)
class AgentCost:
    """One row: an agent (a subagent is `owner/type`) and what it spent; `account` None when nothing was found."""

    agent: str
    account: AgentAccount | None
    teammate: bool = False
    note: str = ""


def _usage(raw: object) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    fields = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    values = {f: raw.get(f) for f in fields}
    return Usage(**{f: v if isinstance(v, int) else 0 for f, v in values.items()})


def transcript_ledger(path: Path, default_agent: str) -> UsageLedger:
    """The usage of every answer of a transcript, by its `agent` (`default_agent` when an entry names none, as in
    Claude Code's own transcripts). An answer split into one entry per block counts once (its `message.id`);
    torn or foreign lines are skipped."""
    ledger, seen = UsageLedger(), set()
    try:
        lines = (safe_paths.read_bytes(path) or b"").splitlines()  # never through a planted link
    except (OSError, UnsafePathError):
        return ledger
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) and entry.get("type") == "assistant" else None
        usage = _usage(message.get("usage")) if isinstance(message, dict) else None
        if message is None or usage is None or (message.get("id") is not None and message.get("id") in seen):
            continue
        seen.add(message.get("id"))
        agent = entry.get("agent") if isinstance(entry.get("agent"), str) else default_agent
        ledger.record(agent, str(message.get("model") or ""), usage)
    return ledger


def teammate_costs(layout: Layout, store: Store, team: str, name: str) -> list[AgentCost]:
    """A teammate's rows (itself, then its subagents) from its transcript."""
    try:
        hit = find_transcript(layout, store, team, name)
    except AgentTeamsError:
        return [AgentCost(name, None, teammate=True, note="no transcript found")]
    ledger = transcript_ledger(hit.path, name)
    names = [name, *(a for a in ledger.agents() if a != name)]
    return [AgentCost(a, ledger.account(a), teammate=True) for a in names]


def team_costs(ledger: UsageLedger, lead: str, layout: Layout, store: Store, team: str | None,
               teammates: list[str]) -> list[AgentCost]:  # fmt: skip
    """The lead (and its subagents) from `ledger`, then each teammate of `team`."""
    rows = [AgentCost(a, ledger.account(a)) for a in [lead, *(a for a in ledger.agents() if a != lead)]]
    for name in teammates if team else []:
        rows += teammate_costs(layout, store, team or "", name)
    return rows


def total(rows: list[AgentCost]) -> AgentAccount:
    """Every row added up."""
    sum_ = AgentAccount()
    for row in rows:
        if row.account is not None:
            sum_.usage.add(row.account.usage)
            sum_.cost_usd += row.account.cost_usd
            sum_.requests += row.account.requests
            sum_.models |= row.account.models
    return sum_
