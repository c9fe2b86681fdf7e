"""The REPL's rich rendering: streamed answers, one line per tool call, team events in the sender's colour.

Thread-safe (the lead's worker thread, its team thread and the input loop all print here); plain text,
without escape codes, whenever the console is not a terminal.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, cast

from rich.console import Console, RenderableType
from rich.text import Text

from agentteams.inert_text import inert
from agentteams.store.paths import LEAD_NAME

if TYPE_CHECKING:  # the loop's and the tools' modules load with the lead, after the REPL's prompt is drawn
    from agentteams.agent.loop import AgentEvent, TurnResult
    from agentteams.team.delivery import TeamEvent

# team colour names (DESIGN.md §1) -> rich colours; rich downgrades them on terminals with fewer colours
PALETTE = {
    "red": "red", "blue": "blue", "green": "green", "yellow": "yellow", "purple": "medium_purple",
    "orange": "dark_orange", "pink": "hot_pink", "cyan": "cyan",
}  # fmt: skip
BULLET = "⏺ "
INDENT = "  "
LINE_LIMIT = 200  # characters of a one-line rendering (a result, a protocol message) before it is cut


def make_console(terminal: bool, file: io.TextIOBase | None = None) -> Console:
    """A console on `file`, else on whatever `sys.stdout` is at print time."""
    return Console(
        file=cast(IO[str], file), force_terminal=terminal, color_system="auto" if terminal else None,
        no_color=not terminal, highlight=False, markup=False, emoji=False, soft_wrap=True,
    )  # fmt: skip


def one_line(text: str, limit: int = LINE_LIMIT) -> str:
    first = " ".join(text.split())
    return first if len(first) <= limit else first[: limit - 1] + "…"


PREVIEW_LINES = 3  # lines of a tool's output shown under its call, as Claude Code shows them


def _said(data: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return one_line(value, 120)
    return ""


def message_text(text: str) -> str:
    """A teammate message for display: a protocol message (compact JSON) in words, any other as written."""
    if not text.startswith("{"):
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        return text
    kind = data["type"]
    words = {
        "idle_notification": "is idle", "shutdown_request": "asks to shut down",
        "shutdown_approved": "agreed to shut down", "shutdown_rejected": "will not shut down",
        "plan_approval_request": "asks to approve a plan", "plan_approval_response": "answered a plan",
        "permission_request": f"asks to use {data.get('tool_name') or 'a tool'}",
        "permission_response": "answered a permission request",
        "task_assignment": f"assigned task #{data.get('taskId', '?')}",
        "task_completed": f"completed task #{data.get('taskId', '?')}",
    }.get(kind)  # fmt: skip
    if words is None:
        return f"[{kind}]"  # a type this version does not know
    detail = _said(data, "result", "summary", "reason", "planContent", "description", "feedback", "subject",
                   "taskSubject")  # fmt: skip
    return f"{words}: {detail}" if detail else words


def preview(content: str) -> list[str]:
    """The first lines of a tool's output, and how many more there are; `(No content)` for none."""
    lines = [ln for ln in content.splitlines() if ln.strip()]
    if not lines:
        return ["(No content)"]
    shown = [one_line(ln, 160) for ln in lines[:PREVIEW_LINES]]
    if len(lines) > PREVIEW_LINES:
        shown.append(f"… +{len(lines) - PREVIEW_LINES} lines")
    return shown


class Renderer:
    """Prints events. With `hold_partial`, a streamed line is kept back until it ends (the prompt shows it)."""

    def __init__(self, console: Console, *, hold_partial: bool = False) -> None:
        self.console = console
        self.hold_partial = hold_partial
        self.on_change: Callable[[], None] = lambda: None  # the prompt redraws when the held line changes
        self._lock = threading.RLock()
        self._partial = ""  # hold mode: the streamed line not finished yet
        self._in_text = False  # inside a run of streamed answer text
        self._line_open = False  # the current streamed line has content
        self._colors: dict[str, str] = {}  # agent -> team colour, remembered from earlier events
        self._last_idle: dict[str, str] = {}  # agent -> its idle line, while nothing else was shown about it
        self._held: list[Text] = []  # team lines that came while an answer streamed: shown when it ends

    @property
    def partial(self) -> str:
        return self._partial

    # -- output primitives --------------------------------------------------------------------------

    def _print(self, text: RenderableType) -> None:
        with self._lock:
            self._end_text()
            self.console.print(text)

    def _stream(self, piece: str) -> None:
        if self.hold_partial:
            self._partial += piece
            self.on_change()
        else:
            self.console.print(Text(piece), end="")

    def _finish_line(self) -> None:
        if self.hold_partial:
            line, self._partial = self._partial, ""
            self.console.print(Text(line))
            self.on_change()
        else:
            self.console.print()
        self._line_open = False

    def _end_text(self) -> None:
        """End a run of streamed text, so what follows starts on a line of its own; then the team lines that came
        while it streamed."""
        if self._line_open:
            self._finish_line()
        self._in_text = False
        held, self._held = self._held, []
        for line in held:
            self.console.print(line)

    # -- the lead's own events ----------------------------------------------------------------------

    def text(self, delta: str) -> None:
        delta = inert(delta)  # the model's words: shown, never obeyed (an OSC 52 must not reach the clipboard)
        with self._lock:
            if not self._in_text:
                delta = delta.lstrip("\n")
                if not delta:
                    return
                self._in_text = True
                self._stream(BULLET)
                self._line_open = True
            for i, piece in enumerate(delta.split("\n")):
                if i > 0 and self._line_open:
                    self._finish_line()
                elif i > 0:
                    self.console.print()  # a blank line inside the answer
                if piece:
                    if not self._line_open:
                        self._stream(INDENT)
                    self._stream(piece)
                    self._line_open = True

    def agent_event(self, event: AgentEvent) -> None:
        from agentteams.agent.loop import tool_input_summary  # loaded long before (the lead's own loop)
        from agentteams.tools.todos import todo_lines

        # a call's input is the model's, its result a file's or a command's: all of it shown, never obeyed
        if event.kind == "text":
            self.text(event.text)
        elif event.kind == "tool_start":
            self._print(Text(inert(f"{BULLET}{event.tool}({tool_input_summary(event.input)})"), style="bold"))
        elif event.kind == "tool_end" and event.result is not None and event.result.is_error:
            self._print(Text(inert(f"  ⎿  {one_line(event.result.content) or 'failed'}"), style="dim"))
        elif event.kind == "tool_end" and event.tool == "TodoWrite" and event.result and event.result.data:
            self._print(Text(inert("  ⎿  " + "\n     ".join(todo_lines(event.result.data.get("newTodos") or [])))))
        elif event.kind == "tool_end" and event.result is not None:
            lines = preview(event.result.content)
            self._print(Text(inert("  ⎿  " + "\n     ".join(lines)), style="dim"))
        elif event.kind == "retry":
            self._print(Text(inert(f"  ⎿  retrying: {one_line(event.text)}"), style="dim"))
        elif event.kind == "compacted" and event.text == "auto":  # /compact says so itself
            self._print(Text("  ⎿  context compacted: the conversation goes on from a summary of it", style="dim"))
        elif event.kind == "turn_end":
            with self._lock:
                self._end_text()

    def turn_end(self, result: TurnResult | None) -> None:
        with self._lock:
            self._end_text()
            if result is None:
                self._print(Text("  ⎿  the turn failed (see the warning above)", style="dim"))
            elif result.stop_reason == "interrupted":
                self._print(Text("  ⎿  Interrupted · what should be done instead?", style="yellow"))
            elif result.stop_reason == "max_turns":
                self._print(Text("  ⎿  stopped: --max-turns reached", style="yellow"))
            elif result.stop_reason == "max_tokens":
                self._print(Text("  ⎿  stopped: the answer hit the output token limit", style="yellow"))
            self.console.print()  # a blank line closes the turn, as Claude Code's transcript view does
        self.on_change()

    # -- the team -----------------------------------------------------------------------------------

    def color_of(self, agent: str, color: str | None = None) -> str | None:
        if color:
            self._colors[agent] = color
        return self._colors.get(agent)

    def team_event(self, event: TeamEvent) -> None:
        color = self.color_of(event.agent, event.color)
        style = PALETTE.get(color or "", "")
        name = Text(inert(event.agent), style=f"bold {style}".strip())
        line = self._team_line(event, name, style)
        if line is None:
            return
        with self._lock:
            if event.kind == "idle":  # a teammate idle again with nothing new to say: said already
                if self._last_idle.get(event.agent) == line.plain:
                    return
                self._last_idle[event.agent] = line.plain
            else:
                self._last_idle.pop(event.agent, None)
            if self._in_text:  # never inside an answer's words: after the answer, in the order they came
                self._held.append(line)
            else:
                self._print(line)

    def _team_line(self, event: TeamEvent, name: Text, style: str) -> Text | None:
        kind, text = event.kind, inert(event.text)  # a teammate's words: shown, never obeyed
        if kind == "message":
            said = message_text(text)
            if said is not text:  # a protocol message, in words: "alice asks to approve a plan: ..."
                return Text.assemble("✉ ", name, " ", Text(said, style=style))
            body = said.rstrip("\n").replace("\n", "\n    ")
            return Text.assemble("✉ ", name, ": ", Text(body, style=style))
        if kind == "idle":
            return Text.assemble("· ", name, Text(" is idle" + (f": {one_line(text)}" if text else ""), style="dim"))
        if kind == "joined":
            return Text.assemble("+ ", name, Text(f" joined the team ({text})" if text else " joined", style="dim"))
        if kind in ("left", "died"):
            return Text(("✗ " if kind == "died" else "- ") + text, style="red" if kind == "died" else style)
        if kind in ("unresponsive", "responsive"):
            return Text(
                ("⚠ " if kind == "unresponsive" else "· ") + text, style="yellow" if kind == "unresponsive" else "dim"
            )
        if kind == "budget":  # the lead's budget watch: a warning at 80 %, a shutdown request at 100 %
            return Text("$ " + text, style="yellow")
        if kind == "claimed":
            return Text.assemble("· ", name, Text(f" claimed task {text}", style="dim"))
        if kind == "permission":
            return Text.assemble("· ", name, Text(f" permission: {text}", style="dim"))
        if kind == "state":
            return None
        if kind == "steered":  # what came while a turn ran went in at a tool result
            whose = "the" if event.agent == LEAD_NAME else f"{event.agent}'s"
            return Text(f"↳ sent to {whose} model mid-turn: {one_line(text)}", style="dim")
        return Text.assemble("· ", name, Text(f": {one_line(text)}", style="dim"))

    # -- the person ---------------------------------------------------------------------------------

    def user_prompt(self, text: str) -> None:
        """Echo a prompt the person did not type at the input line (the one given on the command line)."""
        self._print(Text(inert("> " + text.replace("\n", "\n  ")), style="bold"))

    def question(self, text: str, detail: str = "", syntax: str | None = None) -> None:
        """A permission question, and what it is about: a file's content, a diff, a command (coloured by `syntax`)."""
        self._print(Text(inert(f"? {text}"), style="bold yellow"))
        if not detail:
            return
        detail = inert(detail)  # a file's content, a diff, a command: shown, never obeyed
        if syntax is None:
            self._print(Text(detail))
            return
        from rich.syntax import Syntax

        self._print(Syntax(detail, syntax, theme="ansi_dark", background_color="default", word_wrap=True))

    def notice(self, text: str, style: str = "") -> None:
        self._print(Text(inert(text), style=style))

    def hint(self, text: str) -> None:
        self._print(Text(inert(text), style="dim"))

    def warning(self, level: str, message: str) -> None:
        """A sink for agentteams.diagnostics: one line, never a traceback."""
        self._print(Text(inert(f"agentteams: {level}: {message}"), style="yellow"))

    def table(self, rows: list[tuple[str, str | None, str]]) -> None:
        """(agent, colour, state) rows, the agent in its colour."""
        for agent, color, state in rows:
            style = PALETTE.get(color or "", "")
            self._print(Text.assemble("  ● ", Text(inert(agent), style=f"bold {style}".strip()), f"  {inert(state)}"))

    def flush(self) -> None:
        with self._lock:
            self._end_text()


def describe_input(args: dict[str, Any]) -> str:
    """A tool call's input for a permission question: the summary, else compact JSON."""
    from agentteams.agent.loop import tool_input_summary

    return tool_input_summary(args, limit=160)
