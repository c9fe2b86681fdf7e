"""`agentteams logs TEAM AGENT [-f]`: an agent's transcript as readable text, followed as it grows with `-f`."""

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentteams.inert_text import inert

if TYPE_CHECKING:
    from rich.text import Text

    from agentteams.store.api import Store
    from agentteams.ui.console import Console

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
RESULT_CHARS = 160


@app.command()
def logs(
    team: Annotated[str, typer.Argument(help="The team (it may already be deleted); or alone, a background session.")],
    agent: Annotated[str | None, typer.Argument(help="The member, or `lead`.")] = None,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new entries until Ctrl-C.")] = False,
) -> None:
    """Print an agent's transcript: prompts, replies, tool calls and the first line of each result.

    Works for a teammate that has exited too: its transcript is found by its name. With one argument, print a
    background session's recent terminal output (as `claude logs <id>`).
    """
    if agent is None:
        from agentteams.run import background
        from agentteams.store.paths import Layout

        layout = Layout.from_env()
        typer.echo(inert(background.logs(layout, background.find(layout, team))))
        return
    from agentteams.errors import NotFoundError
    from agentteams.store.opener import open_store
    from agentteams.store.paths import Layout
    from agentteams.team.status_view import find_transcript
    from agentteams.ui.console import command_console

    layout = Layout.from_env()
    store = open_store(layout)
    try:
        hit = find_transcript(layout, store, team, agent)
    except NotFoundError:
        if not _from_node(store, team, agent, follow):  # not on this machine: its node ships it through the store
            raise
        return
    if not hit.exact:
        note = f"team {team} is gone; showing the newest transcript of {agent}: {hit.path}"
        typer.echo(f"agentteams: note: {note}", err=True)
    path = hit.path
    console = command_console(soft_wrap=True)
    printer = _Printer(console, path)
    if not follow:
        printer.print_new()
        return
    from agentteams.store.fs.watch import FileWatcher

    try:
        with FileWatcher([path]) as watcher:  # watching before the first read: no entry slips between
            printer.print_new()
            while True:
                watcher.wait()
                printer.print_new()
    except KeyboardInterrupt:
        return


def _from_node(store: "Store", team: str, agent: str, follow: bool) -> bool:
    """Print the transcript lines the member's node shipped through the store (`-f`: and those to come); False when
    the member is on no node."""
    import json

    from agentteams.errors import NotFoundError
    from agentteams.ui.console import command_console

    try:
        config = store.teams.read(team)
    except NotFoundError:
        return False
    member = config.member(agent) or next((d for d in config.departed or [] if d.name == agent), None)  # or dead
    if member is None or not member.node:
        return False
    console = command_console(soft_wrap=True)
    printer, cursor = _Printer(console, Path()), ""
    try:
        while True:
            lines, cursor = store.nodes.read_log(team, member.name, cursor, 1.0 if follow else 0.0)
            for line in lines:
                with contextlib.suppress(ValueError):
                    entry = json.loads(line)
                    for text in printer.render(entry) if isinstance(entry, dict) else []:
                        console.print(text)
            console.file.flush()
            if not lines and not follow:
                return True
    except KeyboardInterrupt:
        return True


class _Printer:
    """Prints the complete lines appended to a transcript since the last call."""

    def __init__(self, console: "Console", path: Path) -> None:
        self.console = console
        self.path = path
        self.offset = 0
        self.main_agent: str | None = None
        self.subagents_shown: set[str] = set()

    def print_new(self) -> None:
        import json

        from agentteams.store.fs import safe_paths

        try:
            with safe_paths.open_file(self.path, "rb") as f:  # a planted link is refused, not printed
                if f.seek(0, 2) < self.offset:  # rewritten shorter: start over
                    self.offset = 0
                f.seek(self.offset)
                chunk = f.read()
        except FileNotFoundError:
            return
        done = chunk.rfind(b"\n") + 1  # a line still being written waits for its newline
        self.offset += done
        for line in chunk[:done].splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a torn line from a crash
            if isinstance(entry, dict):
                for text in self.render(entry):
                    self.console.print(text)
        self.console.file.flush()  # a pipe is block-buffered: a follower must see each entry as it comes

    def render(self, entry: dict[str, Any]) -> "list[Text]":
        from rich.text import Text

        agent = str(entry.get("agent") or "")
        self.main_agent = self.main_agent or agent
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        content = message.get("content") if isinstance(message, dict) else None
        role = "assistant" if entry.get("type") == "assistant" else "user"
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out = [t for b in blocks if isinstance(b, dict) and (t := block_text(b, role)) is not None] if blocks else []
        if agent and agent != self.main_agent:  # a subagent's turn inside this session
            out = [Text(inert(f"  ({agent}) "), style="dim") + t for t in out]
        if role == "user" and isinstance(content, str):
            out.insert(0, Text(""))
        return [*self._subagent(entry), *out]

    def _subagent(self, entry: dict[str, Any]) -> "list[Text]":
        """A Task call's subagent, read from its own file (as Claude Code, ours keep one per subagent beside the
        session's): its turn, before the call's result."""
        import re

        from agentteams.agent.subagent_run import subagent_file
        from agentteams.errors import UnsafePathError
        from agentteams.store.transcripts.reader import read_entries

        detail = entry.get("toolUseResult")
        agent_id = detail.get("agentId") if isinstance(detail, dict) else None
        if not isinstance(agent_id, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", agent_id) or not self.path.name:
            return []  # an id that is no file name is never followed out of the session's directory
        if agent_id in self.subagents_shown:  # once each, even if files name each other
            return []
        self.subagents_shown.add(agent_id)
        try:
            found = read_entries(subagent_file(self.path, agent_id))
        except (OSError, UnsafePathError):
            return []
        return [t for e in found for t in self.render(e)]


def block_text(block: dict[str, Any], role: str) -> "Text | None":
    """One content block as one (possibly multi-line) text: prompts marked `>`, tool calls `⏺`, results dim."""
    from rich.text import Text

    from agentteams.agent.loop import tool_input_summary

    kind = block.get("type")  # every text below is a model's, a person's or a tool's: shown, never obeyed
    if kind == "text" and role == "user":
        return Text(inert("> " + str(block.get("text", "")).rstrip().replace("\n", "\n  ")), style="cyan")
    if kind == "text":
        return Text(inert(str(block.get("text", "")).rstrip()))
    if kind == "tool_use":
        args = block.get("input") if isinstance(block.get("input"), dict) else {}
        return Text(inert(f"⏺ {block.get('name')}({tool_input_summary(args or {})})"), style="bold")
    if kind == "tool_result":
        first = _result_first_line(block.get("content"))
        return Text(inert(f"  ⎿ {first}"), style="red" if block.get("is_error") else "dim")
    return None


def _result_first_line(content: object) -> str:
    if isinstance(content, list):
        content = " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    lines = str(content or "").strip().splitlines()
    first = lines[0] if lines else "(no output)"
    return first if len(first) <= RESULT_CHARS else first[: RESULT_CHARS - 1] + "…"
