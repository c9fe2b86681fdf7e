"""The REPL's slash commands (/team, /memory, /help, /exit) and the team view they show.

The view is kept from the latest TeamEvents."""

from __future__ import annotations

import threading
from typing import Literal

from agentteams.agent.memory import describe
from agentteams.team.delivery import TeamEvent
from agentteams.team.lead import LeadRuntime
from agentteams.ui.render import Renderer

Outcome = Literal["submit", "done", "leave"]

HELP = """\
/team   the team's teammates and what each is doing
/memory the memory files (CLAUDE.md) this session loaded
/exit   leave (asks first whether to shut a running team down)
/help   this help
Enter sends · Alt-Enter (or Esc then Enter) starts a new line · ↑/↓ recall earlier prompts
Ctrl-C stops the running turn, or clears the input line · Ctrl-D leaves"""
COMMANDS = ("/team", "/memory", "/exit", "/quit", "/help")


class TeamView:
    """What each teammate is doing, as far as the runtime has reported (events come from other threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: dict[str, str] = {}
        self._color: dict[str, str] = {}

    def update(self, event: TeamEvent) -> None:
        with self._lock:
            if event.color:
                self._color[event.agent] = event.color
            if event.kind == "joined":
                self._state[event.agent] = "starting"
            elif event.kind == "state":
                self._state[event.agent] = event.text
            elif event.kind == "idle":
                self._state[event.agent] = "idle"
            elif event.kind == "claimed":
                self._state[event.agent] = f"working on task {event.text}"
            elif event.kind in ("left", "died"):
                self._state.pop(event.agent, None)

    def rows(self, members: list[str]) -> list[tuple[str, str | None, str]]:
        with self._lock:
            return [(m, self._color.get(m), self._state.get(m, "working")) for m in members]


def teammate_count(n: int) -> str:
    return f"{n} teammate" + ("" if n == 1 else "s")


def run_command(line: str, runtime: LeadRuntime, view: TeamView, renderer: Renderer) -> Outcome:
    """Act on a line that may be a slash command; "submit" when it is a prompt for the lead."""
    words = line.split()
    if not words or not words[0].startswith("/"):
        return "submit"
    command = words[0].lower()
    if command in ("/exit", "/quit"):
        return "leave"
    if command == "/help":
        renderer.hint(HELP)
        return "done"
    if command == "/team":
        show_team(runtime, view, renderer)
        return "done"
    if command == "/memory":
        renderer.hint("\n".join(describe(runtime.session.memory)))
        return "done"
    if len(words) == 1 and "/" not in command[1:]:  # `/word` alone is a command attempt; `/usr/bin ...` a prompt
        renderer.hint(f"Unknown command {words[0]}: try {', '.join(c for c in COMMANDS if c != '/quit')}.")
        return "done"
    return "submit"


def show_team(runtime: LeadRuntime, view: TeamView, renderer: Renderer) -> None:
    team = runtime.team
    if not team:
        renderer.hint("No team yet: ask the lead to create one (it uses TeamCreate, then spawns teammates).")
        return
    members = runtime.members()
    renderer.notice(f"Team {team}: {teammate_count(len(members))}", style="bold")
    renderer.table(view.rows(members))
