"""The REPL's slash commands: one table of built-ins (name, help line, handler), the custom commands from
`.claude/commands/` and the config root's `commands/`, and the team view /team shows (ui/team_view.py).

Adding a built-in is one `Command` entry in BUILTINS; /help lists the table and the custom commands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from agentteams.agent.permissions import live_changes
from agentteams.agent.session import TurnExtras, command_extras
from agentteams.errors import AgentTeamsError
from agentteams.model.aliases import switch_refusal
from agentteams.settings.commands import COMMAND_NAME, CommandSet, CustomCommand, invocation, load_commands
from agentteams.team.lead.runtime import LeadRuntime
from agentteams.ui import reports
from agentteams.ui.render import Renderer
from agentteams.ui.team_view import TeamView, teammate_count

Outcome = Literal["submit", "done", "leave"]
KEYS = """\
Enter sends · Alt-Enter (or Esc then Enter) starts a new line · ↑/↓ recall earlier prompts
Ctrl-C stops the running turn, or clears the input line · Ctrl-D leaves"""


@dataclass
class CommandContext:
    """What a command may use: the lead, the team view, the renderer, and how to send a prompt to the lead."""

    runtime: LeadRuntime
    view: TeamView
    renderer: Renderer
    submit: Callable[[str, TurnExtras | None], None] = field(default=lambda _text, _extras: None)

    def custom(self) -> CommandSet:
        """The custom commands, read afresh (a file added during the session counts at once; a few ms)."""
        session = self.runtime.session
        return load_commands(session.options.cwd, session.layout.root)

    def show(self, lines: list[str]) -> None:
        self.renderer.notice("\n".join(lines))


Handler = Callable[[CommandContext, str], Outcome]


@dataclass(frozen=True)
class Command:
    """A built-in: `/name`, the line /help shows, and the handler (given the text after the name)."""

    name: str
    help: str
    handler: Handler
    args: str = ""  # what /help shows after the name, e.g. "[name]"
    aliases: tuple[str, ...] = ()


# -- the built-ins ------------------------------------------------------------------------------------


def _help(ctx: CommandContext, _args: str) -> Outcome:
    ctx.renderer.hint(help_text(ctx.custom()))
    return "done"


def _model(ctx: CommandContext, args: str) -> Outcome:
    if not args.strip():
        ctx.show(reports.model_lines(ctx.runtime))
        return "done"
    if (refusal := switch_refusal(args)) is not None:  # as 2.1.332: said, and the model in use stays
        ctx.renderer.warning("error", refusal)
        return "done"
    try:
        model = ctx.runtime.session.set_model(args.strip())
    except AgentTeamsError as e:
        ctx.renderer.warning("error", str(e))
        return "done"
    said = args.strip() if model == args.strip() else f"{args.strip()} ({model})"  # any name goes, as in 2.1.332
    ctx.renderer.notice(f"Set model to {said}: used from the next request on.")
    return "done"


def _clear(ctx: CommandContext, _args: str) -> Outcome:
    try:
        session_id = ctx.runtime.between_turns("/clear", ctx.runtime.session.clear)
    except AgentTeamsError as e:
        ctx.renderer.warning("error", str(e))
        return "done"
    kept = f"; team {ctx.runtime.team} stays" if ctx.runtime.team else ""
    ctx.renderer.hint(f"Conversation cleared (new session {session_id}{kept}).")
    return "done"


def _compact(ctx: CommandContext, args: str) -> Outcome:
    """`/compact [instructions]`: the conversation replaced by a summary the model writes (the instructions say
    what it must keep); between turns only."""
    session = ctx.runtime.session

    def compact() -> str:
        done = session.compact(args.strip())
        return f"Compacted: the conversation goes on from a summary (~{done.pre_tokens} → ~{done.post_tokens} tokens)."

    try:
        ctx.renderer.hint(ctx.runtime.between_turns("/compact", compact))
    except AgentTeamsError as e:
        ctx.renderer.warning("error", str(e))
    return "done"


def _resume(ctx: CommandContext, args: str) -> Outcome:
    """`/resume`: the recent sessions of this cwd; `/resume N` (or an id) goes on with one, the team kept."""
    from agentteams.store.transcripts.reader import load, sessions
    from agentteams.ui.picker import choice, listing

    session = ctx.runtime.session
    found = [s for s in sessions(session.layout, session.options.cwd) if s.session_id != session.options.session_id]
    if not found:
        ctx.renderer.hint("No other conversation of this directory to resume.")
        return "done"
    picked = choice(args, found) if args.strip() else None
    if picked is None:
        wrong = f"No session {args.strip()!r} in the list. " if args.strip() else ""
        ctx.show([*listing(found[:20]), f"{wrong}Type /resume N (or a session id) to go on with one."])
        return "done"
    try:
        session_id = ctx.runtime.between_turns("/resume", lambda: session.switch(load(picked.path)))
    except (AgentTeamsError, OSError) as e:
        ctx.renderer.warning("error", str(e))
        return "done"
    ctx.renderer.hint(f"Resumed session {session_id} ({len(session.agent.messages)} messages): {picked.first_prompt}")
    return "done"


def _permissions(ctx: CommandContext, args: str) -> Outcome:
    """`/permissions`: the mode and rules; `allow|ask|deny RULE…` adds for this session, `remove RULE…` takes a rule
    out (whatever its origin, for this session), `mode MODE` switches the mode (Shift-Tab cycles it)."""
    verb, _, rest = args.strip().partition(" ")
    if not verb:
        ctx.show(reports.permission_lines(ctx.runtime))
        return "done"
    session = ctx.runtime.session
    try:
        if verb == "mode" and rest.strip():
            ctx.renderer.notice(f"Permission mode: {session.switch_mode(rest.strip())} (for this session).")
        elif verb in ("allow", "ask", "deny") and rest.strip():
            added = live_changes.add_rules(session.policy, verb, rest)
            ctx.renderer.notice(f"Added for this session ({verb}): {', '.join(map(str, added))}.")
        elif verb == "remove" and rest.strip():
            removed = live_changes.remove_rules(session.policy, rest)
            ctx.renderer.notice(f"Removed for this session: {', '.join(map(str, removed))}.")
        else:
            ctx.renderer.warning("error", "usage: /permissions [allow|ask|deny RULE… | remove RULE… | mode MODE]")
    except AgentTeamsError as e:
        ctx.renderer.warning("error", str(e))
    return "done"


def _cost(ctx: CommandContext, _args: str) -> Outcome:
    ctx.show(reports.cost_lines(ctx.runtime, reports.teammate_names(ctx.runtime, ctx.view.joined())))
    return "done"


def _team(ctx: CommandContext, _args: str) -> Outcome:
    show_team(ctx.runtime, ctx.view, ctx.renderer)
    return "done"


def _show(build: Callable[[LeadRuntime], list[str]]) -> Handler:
    def handler(ctx: CommandContext, _args: str) -> Outcome:
        ctx.show(build(ctx.runtime))
        return "done"

    return handler


def _leave(_ctx: CommandContext, _args: str) -> Outcome:
    return "leave"


def _output_style(ctx: CommandContext, args: str) -> Outcome:
    from agentteams.ui.output_style import output_style_lines

    ctx.show(output_style_lines(ctx.runtime.session, args))
    return "done"


BUILTINS: tuple[Command, ...] = (
    Command("/help", "this help: every command, custom ones too", _help),
    Command("/model", "show the model and its aliases, or switch the session's model", _model, args="[name]"),
    Command("/output-style", "list the output styles, or switch to one (saved for this project)", _output_style,
            args="[style]"),
    Command("/clear", "start a fresh conversation (new session; the team stays)", _clear),
    Command("/compact", "replace the conversation by a summary of it, to free context", _compact,
            args="[instructions]"),
    Command("/resume", "list this directory's recent conversations, or go on with one", _resume, args="[N|id]"),
    Command("/cost", "tokens and dollars per agent: this session, its subagents, every teammate", _cost),
    Command("/status", "version, model, session, permission mode, key source, settings, memory, team", _show(
        reports.status_lines)),
    Command("/permissions", "the mode and the rules in effect; add, remove a rule, or change the mode for this session",
            _permissions, args="[allow|ask|deny RULE… | remove RULE… | mode MODE]"),
    Command("/config", "the merged settings and where each value came from", _show(reports.config_lines)),
    Command("/memory", "the memory files (CLAUDE.md) this session loaded", _show(reports.memory_lines)),
    Command("/agents", "the agent types Task takes: built-in and custom (.claude/agents)", _show(reports.agent_lines)),
    Command("/hooks", "the hooks configured in the settings files: event, matcher, command", _show(reports.hook_lines)),
    Command("/mcp", "the MCP servers: each one's state (pending, connected, failed) and tools", _show(
        reports.mcp_lines)),
    Command("/team", "the team's teammates and what each is doing", _team),
    Command("/todos", "the session's todo list (TodoWrite)", _show(reports.todo_report)),
    Command("/exit", "leave (asks first whether to shut a running team down)", _leave, aliases=("/quit",)),
)  # fmt: skip


def builtin(name: str) -> Command | None:
    lowered = name.lower()
    return next((c for c in BUILTINS if lowered == c.name or lowered in c.aliases), None)


def help_text(custom: CommandSet) -> str:
    """Every built-in, then every custom command (a custom one a built-in shadows says so), then the keys."""
    entries = [(f"{c.name} {c.args}".strip(), c.help) for c in BUILTINS]
    for cmd in custom.commands.values():
        usage = f"/{cmd.name} {cmd.argument_hint or ''}".strip()
        shadowed = " · shadowed by the built-in" if builtin(f"/{cmd.name}") else ""
        entries.append((usage, f"{cmd.summary()} {cmd.label}{shadowed}"))
    width = max(len(u) for u, _ in entries)
    lines = [f"{u:<{width}}  {h}" for u, h in entries[: len(BUILTINS)]]
    if len(entries) > len(BUILTINS):
        lines += ["Custom commands:", *(f"{u:<{width}}  {h}" for u, h in entries[len(BUILTINS) :])]
    lines += [f"not loaded: {p}" for p in custom.problems]
    return "\n".join([*lines, KEYS])


# -- dispatch -----------------------------------------------------------------------------------------


def run_command(line: str, ctx: CommandContext) -> Outcome:
    """Act on a line that may be a slash command; "submit" when it is a prompt for the lead as typed.

    `/word …` is always a command attempt (an unknown one is an error line, never a prompt); a line whose first
    word has a second `/` (`/usr/bin/env …`) is a prompt."""
    text = line.strip()
    word = text.split(maxsplit=1)[0] if text else ""
    args = text[len(word) :].strip()
    if not word.startswith("/") or not COMMAND_NAME.fullmatch(word[1:]):
        return "submit"
    command = builtin(word)
    if command is not None:
        return command.handler(ctx, args)
    custom = ctx.custom()
    found = invocation(text, custom)
    if found is not None:
        return _run_custom(*found, ctx)
    file = "/" + word[1:].replace(":", "/") + ".md"  # its file, if it is one that could not be read
    why = next((f" ({p})" for p in custom.problems if file in p), "")
    ctx.renderer.warning("error", f"unknown command {word}{why}: /help lists the commands (nothing was sent)")
    return "done"


def _run_custom(cmd: CustomCommand, args: str, ctx: CommandContext) -> Outcome:
    """Send the expanded prompt to the lead; its front matter's model and allowed-tools hold for that turn."""
    try:
        extras = command_extras(cmd)
    except AgentTeamsError as e:
        ctx.renderer.warning("error", f"/{cmd.name} ({cmd.path}): {e}")
        return "done"
    ctx.submit(cmd.prompt(args), extras)
    return "done"


def show_team(runtime: LeadRuntime, view: TeamView, renderer: Renderer) -> None:
    team = runtime.team
    if not team:
        renderer.hint("No team yet: ask for one (the model makes it with TeamCreate, then spawns teammates).")
        return
    members = runtime.members()
    renderer.notice(f"Team {team}: {teammate_count(len(members))}", style="bold")
    renderer.table(view.rows(members))
