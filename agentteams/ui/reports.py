"""What the REPL's informational commands print (/model, /cost, /status, /permissions, /config, /agents, /hooks), as
lines built from the running lead (its session, settings, policy and team); no secret is ever among them."""

from __future__ import annotations

import os

from agentteams import __version__
from agentteams.agent.hooks.spec import describe as describe_hooks
from agentteams.agent.memory import describe
from agentteams.agent.permissions.policy import Rule
from agentteams.model.aliases import MODEL_ALIASES, alias_names, resolve_model
from agentteams.model.pricing import AgentAccount
from agentteams.model.providers import describe as describe_provider
from agentteams.settings.agents import describe_agents
from agentteams.settings.describe import format_rows, key_source, loaded_files, setting_rows
from agentteams.store.paths import LEAD_NAME
from agentteams.team.lead.costs import AgentCost, team_costs, total
from agentteams.team.lead.runtime import LeadRuntime
from agentteams.tools.todos import todo_lines


def model_lines(runtime: LeadRuntime) -> list[str]:
    """The current model and every alias with the id it stands for here (ANTHROPIC_DEFAULT_*_MODEL applied)."""
    current = runtime.session.model
    aliases = [a for a in alias_names() if a in MODEL_ALIASES and resolve_model(a) == current]
    named = f" ({', '.join(aliases)})" if aliases else ""
    lines = [f"Model: {current}{named}", "Aliases:"]
    lines += [f"  {a:<8} {resolve_model(a)}" for a in alias_names()]
    lines.append("Switch with /model NAME (an alias or a full model id); it applies from the next request.")
    return lines


# -- /cost --------------------------------------------------------------------------------------------

COST_HEADER = ("agent", "requests", "input", "output", "cache write", "cache read", "cost")


def _cost_cells(name: str, account: AgentAccount | None, note: str = "") -> tuple[str, ...]:
    if account is None:
        return (name, "-", "-", "-", "-", "-", note or "-")
    u = account.usage
    numbers = (account.requests, u.input_tokens, u.output_tokens, u.cache_creation_input_tokens,
               u.cache_read_input_tokens)  # fmt: skip
    return (name, *(f"{n:,}" for n in numbers), f"${account.cost_usd:.4f}")


def cost_rows(runtime: LeadRuntime, teammates: list[str]) -> list[AgentCost]:
    session = runtime.session
    return team_costs(session.ledger, session.name, session.layout, runtime.store, runtime.team, teammates)


def cost_lines(runtime: LeadRuntime, teammates: list[str]) -> list[str]:
    """A table: one row per agent (the lead, its subagents, each teammate and its subagents), then the total."""
    rows = cost_rows(runtime, teammates)
    cells = [COST_HEADER, *(_cost_cells(r.agent, r.account, r.note) for r in rows), _cost_cells("total", total(rows))]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COST_HEADER))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in cells]  # fmt: skip
    where = " (teammates from their transcripts)" if any(r.teammate for r in rows) else ""
    return [f"Spent since this session started{where}:", *lines]


# -- /status ------------------------------------------------------------------------------------------


def status_lines(runtime: LeadRuntime) -> list[str]:
    session = runtime.session
    settings = session.options.settings
    cwd = session.options.cwd
    files = loaded_files(settings, cwd, session.layout.root) or ["none"]
    memory = [str(f.path) for f in session.memory.files] or ["none"]
    team = runtime.team
    members = runtime.members()
    return [
        f"Version:          agentteams {__version__}",
        f"Model:            {session.model}",
        f"Working dir:      {cwd}",
        f"Session id:       {session.options.session_id}",
        f"Permission mode:  {session.policy.mode}",
        f"API provider:     {describe_provider(os.environ)}",
        f"API key:          {key_source(settings, os.environ)}",
        f"Settings files:   {files[0]}", *(f"                  {f}" for f in files[1:]),
        f"Memory files:     {memory[0]}", *(f"                  {m}" for m in memory[1:]),
        f"Team:             {team} ({len(members)} teammate{'' if len(members) == 1 else 's'})" if team
        else "Team:             none",
    ]  # fmt: skip


# -- /permissions -------------------------------------------------------------------------------------


def _rule_lines(title: str, rules: list[tuple[Rule, str]]) -> list[str]:
    if not rules:
        return [f"{title}: none"]
    width = max(len(str(r)) for r, _ in rules)
    return [f"{title}:", *(f"  {r!s:<{width}}  {origin}" for r, origin in rules)]


def permission_lines(runtime: LeadRuntime) -> list[str]:
    """The mode, then allow / ask / deny rules each with where it came from, then the additional directories."""
    policy = runtime.session.policy
    settings = runtime.session.options.settings
    allowed = [(r, r.origin or "--allowedTools") for r in policy.allowed]
    allowed += [(r, "allowed for this session") for r in policy.session_rules]
    lines = [f"Permission mode: {policy.mode}"]
    lines += _rule_lines("Allow", allowed)
    lines += _rule_lines("Ask", [(r, r.origin or "settings") for r in policy.asked])
    lines += _rule_lines("Deny", [(r, r.origin or "--disallowedTools") for r in policy.disallowed])
    dirs = []
    for i, d in enumerate(policy.additional_dirs):
        origin = settings.origins.get(f"permissions.additionalDirectories[{i}]")
        dirs.append(f"  {d}  {origin or 'settings'}")
    lines += ["Additional directories:", *dirs] if dirs else ["Additional directories: none"]
    return lines


# -- /config and /memory ------------------------------------------------------------------------------


def config_lines(runtime: LeadRuntime) -> list[str]:
    """The merged settings with sources, as `agentteams config` prints them (read when this lead started)."""
    settings = runtime.session.options.settings
    return [*format_rows(setting_rows(settings)), *(f"not loaded: {p}" for p in settings.problems)]


def memory_lines(runtime: LeadRuntime) -> list[str]:
    return describe(runtime.session.memory)


def hook_lines(runtime: LeadRuntime) -> list[str]:
    """Every configured hook (event, matcher, command, timeout, file), and whether `disableAllHooks` turns them off."""
    settings = runtime.session.options.settings
    lines = describe_hooks(settings)
    if not lines:
        return ["No hooks configured (the `hooks` key of the settings files; `/config` shows which were read)."]
    if settings.merged.get("disableAllHooks") is True:
        lines.insert(0, "All hooks are off: disableAllHooks is true.")
    return lines


def agent_lines(runtime: LeadRuntime) -> list[str]:
    """Every agent type `Task` takes (built-in and custom, with file, tools and model), then the files skipped."""
    agents = runtime.session.agents
    return [*describe_agents(agents), *(f"not loaded: {p}" for p in agents.problems)]


def todo_report(runtime: LeadRuntime) -> list[str]:
    """/todos: the lead's todo list as its last TodoWrite left it (a resumed session's too)."""
    return todo_lines([t.to_json() for t in runtime.session.ctx.todos.items])


def teammate_names(runtime: LeadRuntime, joined: list[str]) -> list[str]:
    """The team's current teammates and those that joined during this session and have left since."""
    names = [*runtime.members(), *(n for n in joined if n not in runtime.members())]
    return [n for n in names if n != LEAD_NAME]


def mcp_lines(runtime: LeadRuntime) -> list[str]:
    """/mcp: every MCP server of this session, its transport, where it was configured, its state and tool count."""
    from agentteams.tools.mcp.hub import describe

    hub = runtime.session.mcp.hub
    return describe(hub.lines() if hub is not None else []).splitlines()
