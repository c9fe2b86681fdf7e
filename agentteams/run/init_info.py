"""What a driven or `-p` session says about itself: the stream-json `system` `init` line and the SDK's `initialize`
answer (`get_server_info`), each key in Claude Code 2.1.332's order, every value from this session's own state."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any

from agentteams import CLAUDE_CODE_COMPAT, __version__
from agentteams.settings.agents import BUILT_IN
from agentteams.settings.commands import CommandSet, CustomCommand, load_commands

MODELS = (("default", "Default (recommended)"), ("sonnet", "Sonnet"), ("opus", "Opus"), ("haiku", "Haiku"))
DEFAULT_STYLE = "default"  # the one output style we have: the settings' `outputStyle` is reported, never applied
# why fast mode is off: we have none (an SDK reads the reason as an open set of strings)
NO_FAST_MODE = "unsupported"
# our built-in agent types, described for a program choosing one (their tools: settings/agents.py BUILT_IN_TOOLS)
AGENT_BLURBS = {
    "general-purpose": "Any job of several steps: research, search the code, change it; every tool but Task.",
    "Explore": "Read-only search of the codebase: find files, grep for symbols, answer where something is.",
    "Plan": "Read-only research that ends in a step-by-step implementation plan.",
}


@dataclass(frozen=True)
class BuiltinCommand:
    """A slash command a driven or `-p` session runs itself (the REPL's others need a terminal)."""

    name: str
    description: str
    argument_hint: str = ""


# only what run/headless.py acts on without a terminal
BUILTIN_COMMANDS = (
    BuiltinCommand("compact", "Replace the conversation by a summary of it, to free context", "[instructions]"),
)


def session_commands(options: Any) -> CommandSet:
    """The session's own commands: the user's and the project's files (the scopes its settings read), then its
    plugins' (`plugin:command`); a name defined twice keeps the first."""
    from agentteams.settings.commands import commands_off
    from agentteams.store.paths import config_root

    scopes = [s for s in ("user", "project") if s in options.settings.sources]
    found = load_commands(options.cwd, config_root(), scopes)
    if commands_off():  # --disable-slash-commands: the plugins' commands neither
        return CommandSet({}, ())
    commands, problems = dict(found.commands), list(found.problems)
    for plugin in options.plugins:
        theirs, bad = plugin.commands()
        commands.update({n: c for n, c in theirs.items() if n not in commands})
        problems += bad
    return CommandSet(commands, tuple(problems))


def described(command: CustomCommand) -> str:
    """A command's description as Claude Code's `initialize` answer gives it: where it comes from after a file's
    own (`… (project)`), before a plugin's (`(a-plugin) …`); without one, the body's first line, markdown heading
    marks dropped."""
    first = next((ln.strip() for ln in command.body.splitlines() if ln.strip()), "")
    text = command.description or first.lstrip("#").strip()
    return f"{command.label} {text}" if command.scope == "plugin" else f"{text} {command.label}"


def agent_names(session: Any) -> list[str]:
    """Every agent type a Task call may name, case-insensitively sorted as Claude Code lists them."""
    return sorted(session.agents.names(), key=str.lower)


def output_style(options: Any) -> str:
    """The merged settings' `outputStyle` (any scope read), else the default."""
    style = options.settings.merged.get("outputStyle")
    return style if isinstance(style, str) and style else DEFAULT_STYLE


def tool_names(session: Any) -> list[str]:
    """The tools offered: the built-in ones sorted by name (Task as Agent, its other name, as Claude Code sorts
    it), then MCP servers' tools in their servers' order."""
    names = [t.name for t in session.tools]
    builtin = sorted((n for n in names if not n.startswith("mcp__")), key=lambda n: "Agent" if n == "Task" else n)
    offered = [n for n in session.agent.tools if n.startswith("mcp__")]  # the servers' tools the agent offers now
    return [*builtin, *(offered or (n for n in names if n.startswith("mcp__")))]


def plugins(options: Any) -> list[dict[str, str]]:
    return [{"name": p.name, "path": str(p.path), "source": p.source, **({"version": p.version} if p.version else {})}
            for p in options.plugins]  # fmt: skip


def key_source() -> str:
    return next((n for n in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if os.environ.get(n)), "none")


def init_line(session: Any, options: Any) -> dict[str, Any]:
    """The stream-json `system` `init` line that opens each turn. Keys we have nothing behind hold what is true
    of us (no sandbox, no terminal-only command, no auto-memory directory, no messaging socket, no fast mode)."""

    commands = session_commands(options)
    return {
        "type": "system", "subtype": "init", "cwd": str(options.cwd), "session_id": options.session_id,
        "tools": tool_names(session), "mcp_servers": mcp_servers(session), "model": session.model,
        "permissionMode": session.policy.mode,
        "slash_commands": [*commands.commands, *(c.name for c in BUILTIN_COMMANDS if c.name not in commands.commands)],
        "terminal_slash_commands": [], "apiKeySource": key_source(), "claude_code_version": CLAUDE_CODE_COMPAT,
        "output_style": output_style(options), "agents": agent_names(session), "skills": [],
        "plugins": plugins(options), "capabilities": [], "analytics_disabled": True, "product_feedback_disabled": True,
        "served_by_anthropic": False, "uuid": str(uuid.uuid4()), "sandbox_enabled": False, "memory_paths": {},
        "original_cwd": str(options.cwd), "additional_directories": [str(d) for d in options.add_dirs],
        "messaging_socket_path": None, "fast_mode_state": "off", "fast_mode_disabled_reason": NO_FAST_MODE,
        "per_turn_effort_active": False, "ultrathink_available": False, "ultrathink_typed_raises": False,
        "view_mode": "default",
    }  # fmt: skip


def server_info(session: Any, options: Any) -> dict[str, Any]:
    """The session as `initialize`'s answer describes it: its commands, agents, output style, models, account."""
    found = session_commands(options)
    commands: list[dict[str, Any]] = [
        {"name": c.name, "description": described(c), "argumentHint": c.argument_hint or ""}
        for c in found.commands.values()
    ]
    commands += [{"name": c.name, "description": c.description, "argumentHint": c.argument_hint, "builtin": True}
                 for c in BUILTIN_COMMANDS if c.name not in found.commands]  # fmt: skip
    agents = []
    for name in agent_names(session):
        agent = session.agents.agents.get(name)
        blurb = AGENT_BLURBS.get(name, "") if name in BUILT_IN or agent is None else agent.description
        agents.append({"name": name, "description": blurb, **({"model": agent.model} if agent and agent.model else {})})
    return {
        "commands": commands, "agents": agents, "output_style": output_style(options),
        "available_output_styles": [DEFAULT_STYLE],
        "models": [{"value": value, "displayName": shown, "description": shown} for value, shown in MODELS],
        "account": {"tokenSource": "none", "apiKeySource": key_source(), "apiProvider": "firstParty"},
        "pid": os.getpid(), "claude_code_version": CLAUDE_CODE_COMPAT, "agentteams_version": __version__,
        "current_permission_mode": session.policy.mode, "hook_on_failure_supported": True,
        "analytics_disabled": True, "sandbox_enabled": False, "fast_mode_state": "off",
        "fast_mode_disabled_reason": NO_FAST_MODE, "session_state": "idle", "capabilities": [],
    }  # fmt: skip


# where a server was configured, in claude 2.1.332's words (its config scopes): --mcp-config's servers are "dynamic";
# settings' mcpServers, which claude does not read, have none (the key is optional in the SDK's schema)
SOURCES = {"flag": "dynamic", "user": "user", "project": "project", "local": "local", "program": "dynamic"}


def mcp_servers(session: Any) -> list[dict[str, str]]:
    """Each MCP server of the session: its name, its state (pending, connected, failed, needs approval) and where it
    was configured (`source`, as claude 2.1.332's init line and mcp_status have it; a program's own server: sdk)."""
    hub = session.mcp.hub
    if hub is None:
        return []
    rows = []
    for line in hub.lines():
        source = "sdk" if line.transport == "sdk" else SOURCES.get(line.origin)
        rows.append({"name": line.name, "status": line.status, **({"source": source} if source else {})})
    return rows
