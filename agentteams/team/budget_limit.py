"""A budget's limit and the share of it spent: all that a view of a member needs (`status` shows the share without
loading the budget keeper in team/budget.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """A limit in tokens (input + output), in dollars, or both; None: no limit of that kind."""

    tokens: int | None = None
    usd: float | None = None

    def percent(self, tokens: int, usd: float) -> int | None:
        """The larger share spent, in whole percent (floored: 79.9 % is not yet 80 %); None without a limit."""
        shares = [100 * tokens / self.tokens] if self.tokens else []
        shares += [100 * usd / self.usd] if self.usd else []
        return math.floor(max(shares)) if shares else None
