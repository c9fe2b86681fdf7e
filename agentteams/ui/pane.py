"""Plain, compact rendering of agent and team events for a teammate's pane (the REPL has its own)."""

from __future__ import annotations

import json
import re
from typing import TextIO

from agentteams.agent.loop import AgentEvent, tool_input_summary
from agentteams.inert_text import inert
from agentteams.team.delivery import TeamEvent
from agentteams.tools.todos import todo_lines

# a rendered inbox message (agentteams.team.delivery.message_block): sender, colour, text
BLOCK = re.compile(r'<teammate-message teammate_id="([^"]*)"(?: color="([^"]*)")?[^>]*>\n(.*?)\n</teammate-message>',
                   re.S)  # fmt: skip
ANSI = {"red": 31, "green": 32, "yellow": 33, "blue": 34, "purple": 35, "cyan": 36, "orange": 33, "pink": 35}


class PaneRenderer:
    """Streams text as it arrives, one line per tool call, team events dimmed; colour only on a terminal."""

    def __init__(self, out: TextIO, *, name: str, color: str | None) -> None:
        self.out = out
        self.name = name
        self.tty = out.isatty()
        self.color = color
        self._mid_line = False

    def _paint(self, text: str, color: str | None, *, bold: bool = False) -> str:
        text = inert(text)  # what is painted is anyone's text: its control characters shown, ours added after
        if not self.tty or (color is None and not bold):
            return text
        codes = [str(ANSI[color])] if color in ANSI else []
        codes += ["1"] if bold else []
        return f"\033[{';'.join(codes)}m{text}\033[0m" if codes else text

    def _line(self, text: str) -> None:
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        self.out.write(text + "\n")
        self.out.flush()

    def banner(self, text: str) -> None:
        self._line(self._paint(f"● {text}", self.color, bold=True))

    def agent_event(self, event: AgentEvent) -> None:
        if event.kind == "text":
            self.out.write(inert(event.text))  # the model's words: shown, never obeyed
            self.out.flush()
            self._mid_line = not event.text.endswith("\n")
        elif event.kind == "tool_start":
            self._line(self._paint(f"  ⏺ {event.tool}({tool_input_summary(event.input)})", None, bold=True))
        elif event.kind == "tool_end" and event.result is not None and event.result.is_error:
            first = event.result.content.splitlines()[0][:160] if event.result.content else "failed"
            self._line(inert(f"    ✗ {first}"))
        elif event.kind == "tool_end" and event.tool == "TodoWrite" and event.result and event.result.data:
            for line in todo_lines(event.result.data.get("newTodos") or []):
                self._line(inert(f"    {line}"))
        elif event.kind == "retry":
            self._line(inert(f"  … retrying: {event.text}"))
        elif event.kind == "compacted":
            self._line(f"  … context compacted ({event.text}): the conversation goes on from a summary of it")
        elif event.kind == "user" and event.message is not None:
            content = event.message.get("content")
            if isinstance(content, str):
                self._prompt(content)

    def _prompt(self, content: str) -> None:
        """A turn's prompt: each teammate message as `✉ sender: first line`, anything else by its first line."""
        blocks = BLOCK.findall(content)
        for sender, color, body in blocks:
            lines = body.strip().splitlines()
            self._line(self._paint(f"✉ {sender}: {lines[0][:150] if lines else ''}", color or "cyan"))
        if not blocks:
            first = content.strip().splitlines()[:1]
            self._line(self._paint(f"▸ {first[0][:160] if first else ''}", "cyan"))

    def team_event(self, event: TeamEvent) -> None:
        if event.kind == "state":
            return
        detail = event.text if len(event.text) < 160 else json.dumps(event.text[:157] + "...")
        self._line(self._paint(f"  [{event.kind}] {event.agent}: {detail}", event.color))
