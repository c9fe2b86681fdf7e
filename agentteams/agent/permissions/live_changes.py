"""What a person changes of the permissions during a session: the mode (Shift-Tab, `/permissions mode`) and the
rules (`/permissions allow|ask|deny|remove`), for that session only (nothing is written to a settings file)."""

from __future__ import annotations

from agentteams.agent.permissions.policy import PermissionPolicy, Rule, parse_mode, parse_rules
from agentteams.errors import AgentTeamsError
from agentteams.tools.runtime_hooks import MODE_ALIASES


def modes_to_cycle(started: str) -> tuple[str, ...]:
    """What Shift-Tab goes through, as Claude Code: default, acceptEdits, plan, and bypassPermissions only for a
    session that started in it."""
    return ("default", "acceptEdits", "plan", *(("bypassPermissions",) if started == "bypassPermissions" else ()))


def next_mode(policy: PermissionPolicy, started: str) -> str:
    modes = modes_to_cycle(started)
    return modes[(modes.index(policy.mode) + 1) % len(modes)] if policy.mode in modes else modes[0]


def switch_mode(policy: PermissionPolicy, mode: str, *, started: str) -> str:
    """The mode from now on (the next tool call obeys it); bypassPermissions only for a session that started in it."""
    wanted = parse_mode(MODE_ALIASES.get(mode, mode))
    if wanted == "bypassPermissions" and started != "bypassPermissions":
        raise AgentTeamsError("bypassPermissions can only be chosen at start (--permission-mode)")
    policy.mode = wanted
    return wanted


def add_rules(policy: PermissionPolicy, kind: str, text: str) -> list[Rule]:
    """Rules typed in the session (`/permissions allow Bash(git:*)`)."""
    rules = parse_rules(text, "/permissions (this session)")
    target = {"allow": policy.allowed, "ask": policy.asked, "deny": policy.disallowed}[kind]
    target += [r for r in rules if r not in target]
    return rules


def remove_rules(policy: PermissionPolicy, text: str) -> list[Rule]:
    """Rules taken out for this session, wherever they came from; an unknown one is an error (nothing removed)."""
    wanted = parse_rules(text)
    lists = (policy.allowed, policy.asked, policy.disallowed, policy.session_rules)
    missing = [r for r in wanted if not any(r in rules for rules in lists)]
    if missing:
        raise AgentTeamsError(f"no such rule: {', '.join(map(str, missing))} (/permissions lists them)")
    for rules in lists:
        rules[:] = [r for r in rules if r not in wanted]
    return wanted
