"""Per-model prices ($ per million tokens) and `UsageLedger`, the thread-safe per-agent usage and cost account.

Cache writes cost 1.25x the input price (5-minute ephemeral cache), cache reads 0.1x (0.05x for the 5.5 models, as
Claude Code 2.1.330 prices them). Unknown models cost 0.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from agentteams import diagnostics
from agentteams.model.types import Usage

CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.1


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens."""

    input: float
    output: float
    read: float | None = None  # a cache read's own price, where it is not CACHE_READ_FACTOR of the input's

    @property
    def cache_write(self) -> float:
        return self.input * CACHE_WRITE_FACTOR

    @property
    def cache_read(self) -> float:
        return self.input * CACHE_READ_FACTOR if self.read is None else self.read


# (substring of the lower-cased model id, price): the first match wins, so the most specific come first.
# Opus 4 / 4.1 / 3 kept the old Opus price; Opus 4.5 to 5 cost the 4.5 price; the 5.5 models' prices are Claude Code
# 2.1.330's (Haiku 5.5's higher rate above 100k prompt tokens is not applied).
PRICES: tuple[tuple[str, Price], ...] = (
    ("opus-5-5", Price(4.0, 20.0, read=0.2)),
    ("sonnet-5-5", Price(2.0, 10.0, read=0.1)),
    ("haiku-5-5", Price(0.1, 0.5, read=0.01)),
    ("fable", Price(10.0, 50.0)),
    ("opus-4-1", Price(15.0, 75.0)),
    ("opus-4-0", Price(15.0, 75.0)),
    ("opus-4-2025", Price(15.0, 75.0)),
    ("3-opus", Price(15.0, 75.0)),
    ("opus", Price(5.0, 25.0)),
    ("sonnet", Price(3.0, 15.0)),
    ("haiku-4", Price(1.0, 5.0)),
    ("3-5-haiku", Price(0.8, 4.0)),
    ("3-haiku", Price(0.25, 1.25)),
    ("haiku", Price(1.0, 5.0)),
)


def price_for(model: str) -> Price | None:
    """The price of a model id (full, Bedrock or Vertex form), or None when the family is unknown."""
    key = model.lower()
    for pattern, price in PRICES:
        if pattern in key:
            return price
    return None


def cost_usd(model: str, usage: Usage) -> float:
    """What one call with this usage cost in dollars; 0.0 for an unknown model."""
    price = price_for(model)
    if price is None:
        return 0.0
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    )
    return total / 1_000_000


@dataclass
class AgentAccount:
    """Everything one agent has spent so far."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    requests: int = 0
    models: set[str] = field(default_factory=set)
    api_ms: int = 0  # time spent waiting on the model's answers (the SDK's `duration_api_ms`)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "cost_usd": round(self.cost_usd, 6),
            "models": sorted(self.models),
            **self.usage.to_json(),
        }


class UsageLedger:
    """Accumulates usage and cost per agent name; safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._accounts: dict[str, AgentAccount] = {}
        self._by_model: dict[str, AgentAccount] = {}  # the same calls again, by the model that answered

    def record(self, agent: str, model: str, usage: Usage, api_ms: int = 0) -> float:
        """Add one call's usage (and the milliseconds its answer took) to `agent`'s account; that call's cost."""
        cost = cost_usd(model, usage)
        diagnostics.debug("API: %s answered in %d ms (%d tokens out)", model, api_ms, usage.output_tokens)
        with self._lock:
            account = self._accounts.setdefault(agent, AgentAccount())
            account.usage.add(usage)
            account.cost_usd += cost
            account.requests += 1
            account.models.add(model)
            account.api_ms += api_ms
            spent = self._by_model.setdefault(model, AgentAccount(models={model}))
            spent.usage.add(usage)
            spent.cost_usd += cost
            spent.requests += 1
        return cost

    def by_model(self) -> dict[str, AgentAccount]:
        """What each model's answers cost, every agent together."""
        with self._lock:
            return {model: _copy(account) for model, account in self._by_model.items()}

    def account(self, agent: str) -> AgentAccount:
        """A copy of one agent's account (empty when it has made no call)."""
        with self._lock:
            found = self._accounts.get(agent, AgentAccount())
            return _copy(found)

    def agents(self) -> list[str]:
        with self._lock:
            return sorted(self._accounts)

    def total(self) -> AgentAccount:
        """All agents together."""
        with self._lock:
            total = AgentAccount()
            for account in self._accounts.values():
                total.usage.add(account.usage)
                total.cost_usd += account.cost_usd
                total.requests += account.requests
                total.models |= account.models
                total.api_ms += account.api_ms
            return total

    def to_json(self) -> dict[str, Any]:
        """`{"agents": {name: account}, "total": account}`, each account with usage, cost and request count."""
        with self._lock:
            agents = {name: self._accounts[name].to_json() for name in sorted(self._accounts)}
        return {"agents": agents, "total": self.total().to_json()}


def _copy(account: AgentAccount) -> AgentAccount:
    usage = Usage()
    usage.add(account.usage)
    return AgentAccount(usage=usage, cost_usd=account.cost_usd, requests=account.requests, models=set(account.models),
                        api_ms=account.api_ms)  # fmt: skip
