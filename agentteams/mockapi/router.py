"""Which scripted turn answers a request: route matching, turn positions, repeats and wait conditions."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from agentteams.mockapi.reqtext import first_user_text, last_prompt_text, last_user_text, system_text
from agentteams.mockapi.script import Match, Route, Script, Turn


@dataclass(frozen=True)
class Choice:
    route: str | None  # None: no route matched, the fallback answers
    turn: int | None  # index of the scripted turn; None for idle or fallback
    answer: Turn


def matches(match: Match, body: dict[str, Any], raw: str) -> bool:
    """True if every matcher the route gives hits this request."""
    if match.tools is not None and bool(body.get("tools")) != match.tools:
        return False
    if match.system is not None and match.system not in system_text(body):
        return False
    if match.any is not None and match.any not in raw:
        return False
    if match.last_prompt is not None and match.last_prompt not in last_prompt_text(body):
        return False
    if match.last_user is not None and match.last_user not in last_user_text(body):
        return False
    return match.first_user is None or match.first_user in first_user_text(body)


def ready(turn: Turn, body: dict[str, Any]) -> bool:
    """True if the turn's wait conditions are met by the conversation so far."""
    if turn.wait_for is not None:
        messages = json.dumps(body.get("messages", []), ensure_ascii=False)
        wanted = (turn.wait_for,) if isinstance(turn.wait_for, str) else turn.wait_for
        if not all(w in messages for w in wanted):
            return False
    return turn.wait_for_last is None or turn.wait_for_last in last_user_text(body)


def _waits(turn: Turn) -> bool:
    return turn.wait_for is not None or turn.wait_for_last is not None


class Router:
    """Thread-safe script state: each route's next turn and how often it has been answered."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self._lock = threading.Lock()
        self._pos: dict[str, int] = {}
        self._answered: dict[str, int] = {}

    def choose(self, body: dict[str, Any], raw: str) -> Choice:
        with self._lock:
            for route in self.script.routes:
                if matches(route.match, body, raw):
                    return self._advance(route, body)
            return Choice(route=None, turn=None, answer=self.script.fallback)

    def _advance(self, route: Route, body: dict[str, Any]) -> Choice:
        pos = self._pos.get(route.name, 0)
        while pos + 1 < len(route.turns) and route.turns[pos].passable and _waits(route.turns[pos + 1]):
            if not ready(route.turns[pos + 1], body):
                break
            pos += 1  # "waiting for X" when X is already here: a model would go straight on
            self._pos[route.name], self._answered[route.name] = pos, 0
        if pos >= len(route.turns) or not ready(route.turns[pos], body):
            return Choice(route=route.name, turn=None, answer=route.idle)
        turn = route.turns[pos]
        answered = self._answered.get(route.name, 0) + 1
        if answered >= turn.repeat:
            self._pos[route.name], self._answered[route.name] = pos + 1, 0
        else:
            self._answered[route.name] = answered
        return Choice(route=route.name, turn=pos, answer=turn)
