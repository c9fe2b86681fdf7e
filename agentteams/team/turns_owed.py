"""Which teammates took a message from their inbox and have not yet shown the turn it starts (from the lead's looks
at the team's files), since a real claude teammate's `isActive: false` and empty inbox do not yet mean it is done.
"""

# A real claude teammate (2.1.330, observed under load) takes its mail before it writes `isActive: true`, up to ~2 s
# later, and runs what it took in the middle of a turn as its next turn, after that turn's idle notice.

from __future__ import annotations

from collections.abc import Collection, Hashable
from dataclasses import dataclass, field

OWED_SECONDS = 3.0  # how long a teammate seen idle has to show the turn it owes before it is taken for done


@dataclass
class _Seen:
    active: bool = False
    period: int = 0  # how many working periods (isActive false -> true) have been seen
    waiting: frozenset[Hashable] = frozenset()  # the unread messages at the last look
    owed_in: int | None = None  # the period during which it took a message: it owes one that begins later
    idle_at: float = 0.0  # when it was last seen turn from working to idle


@dataclass
class TurnsOwed:
    """Fed every look (`look`); says whether a teammate still owes the turn for a message it took."""

    _seen: dict[str, _Seen] = field(default_factory=dict)

    def look(self, name: str, active: bool, unread: Collection[Hashable], now: float) -> bool:
        """One look at `name`: whether it is working (`isActive`) and its unread messages' identities, at monotonic
        time `now`. True while it owes a turn: it took a message and no working period has begun since, and it has
        been idle less than OWED_SECONDS (one that took a message into the turn it was in owes none)."""
        seen = self._seen.setdefault(name, _Seen())
        began = active and not seen.active
        if began:
            seen.period += 1
        elif seen.active and not active:
            seen.idle_at = now
        seen.active = active
        if seen.waiting - set(unread):  # taken (read or pruned) since the last look: for the turn that began just
            seen.owed_in = seen.period - 1 if began else seen.period  # now, else for one that begins later
            if not active:
                seen.idle_at = now
        seen.waiting = frozenset(unread)
        if seen.owed_in is not None and seen.period > seen.owed_in:
            seen.owed_in = None  # a working period began after the take: its turn has shown
        if seen.owed_in is None or active:
            return False
        return now - seen.idle_at < OWED_SECONDS
