"""What the REPL knows of its teammates, kept from the runtime's TeamEvents: each one's state and colour, for /team
and the toolbar. Light on purpose: the REPL draws its prompt before the lead is composed, and needs this by then."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentteams.team.delivery import TeamEvent


def teammate_count(n: int) -> str:
    return f"{n} teammate" + ("" if n == 1 else "s")


class TeamView:
    """What each teammate is doing, as far as the runtime has reported (events come from other threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: dict[str, str] = {}
        self._color: dict[str, str] = {}
        self._joined: list[str] = []  # every teammate that joined during this session, in order (for /cost)

    def update(self, event: TeamEvent) -> None:
        with self._lock:
            if event.color:
                self._color[event.agent] = event.color
            if event.kind == "joined":
                self._state[event.agent] = "starting"
                if event.agent not in self._joined:
                    self._joined.append(event.agent)
            elif event.kind == "state":
                self._state[event.agent] = event.text
            elif event.kind == "idle":
                self._state[event.agent] = "idle"
            elif event.kind == "claimed":
                self._state[event.agent] = f"working on task {event.text}"
            elif event.kind in ("left", "died"):
                self._state.pop(event.agent, None)
            elif event.kind == "unresponsive":
                self._state[event.agent] = "unresponsive"
            elif event.kind == "responsive":
                self._state[event.agent] = "working"  # its next state report says more

    def joined(self) -> list[str]:
        with self._lock:
            return list(self._joined)

    def rows(self, members: list[str]) -> list[tuple[str, str | None, str]]:
        with self._lock:
            return [(m, self._color.get(m), self._state.get(m, "working")) for m in members]
