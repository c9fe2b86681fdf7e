"""A teammate's own spawn options (the Task call's `mode`, `cwd`, `allowed_tools`, `disallowed_tools`): checked
before anything starts, each refusal one line. The teammate's session enforces them at execution, as Claude Code's
`--permission-mode`, `--allowedTools` and `--disallowedTools` do: a refused call is refused whatever the model sends."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentteams.agent.permissions.policy import PermissionRuleError, parse_rules
from agentteams.settings.agents import BUILT_IN_TOOLS as SUBAGENT_TOOLS
from agentteams.settings.agents import AgentCatalog, load_agents
from agentteams.settings.load import load_settings
from agentteams.settings.types import Settings
from agentteams.team.nodes.placement import Placement, PlacementError
from agentteams.tools.base import ToolInputError
from agentteams.tools.runtime_hooks import PERMISSION_MODES
from agentteams.tools.spawn_limits import FORK_TYPE

if TYPE_CHECKING:
    from agentteams.agent.session import Session

RULE_KEYS = ("allowed_tools", "disallowed_tools")


@dataclass(frozen=True)
class TeammateOptions:
    """What one teammate is started with besides its name and prompt."""

    mode: str  # its permission mode (after plan approval, for a plan-mode teammate)
    plan_mode_required: bool
    cwd: Path
    settings: Settings  # the lead's, or, in another directory, that directory's own (its project settings apply)
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    agents: AgentCatalog = field(default_factory=AgentCatalog)  # the custom agent types its directory has
    placement: Placement = field(default_factory=Placement)  # the node it runs on (team/nodes/placement.py)


def teammate_options(session: Session, args: dict[str, Any]) -> TeammateOptions:
    """The options of a Task call's teammate; ToolInputError (one line) for a bad mode, cwd or rule."""
    opts = session.options
    lead_mode = "bypassPermissions" if session.policy.mode == "bypassPermissions" else opts.permission_mode
    mode = str(args.get("mode") or lead_mode)  # teammates inherit the lead's mode unless told
    if mode not in PERMISSION_MODES:
        raise ToolInputError(f"unknown mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}")
    if mode == "bypassPermissions" and lead_mode != "bypassPermissions":
        raise ToolInputError("A teammate cannot bypass permissions while you do not: choose another mode.")
    plan = bool(args.get("plan_mode_required")) or mode == "plan"
    cwd = _directory(args, opts.cwd)
    settings = settings_for(session, cwd)
    allowed, disallowed = (_rules(args, k) for k in RULE_KEYS)
    agents = session.agents if cwd == opts.cwd else load_agents(cwd, session.layout.root)
    kind = str(args.get("subagent_type") or "")
    if kind and kind not in SUBAGENT_TOOLS and agents.get(kind) is None and kind != FORK_TYPE:  # fork: member.py
        raise ToolInputError(f"unknown subagent_type {kind!r} in {cwd}; use one of {', '.join(agents.names())}")
    try:
        placement = Placement.of(args)
    except PlacementError as e:
        raise ToolInputError(str(e)) from None
    return TeammateOptions(lead_mode if plan else mode, plan, cwd, settings, allowed, disallowed, agents, placement)


def settings_for(session: Session, cwd: Path) -> Settings:
    """The settings a teammate in `cwd` starts with: the lead's, or in another directory (another project) that
    directory's own `.claude/settings*.json` with the user's and managed ones, as a `claude` started there reads."""
    if cwd == session.options.cwd:
        return session.options.settings
    return load_settings(cwd, root=session.layout.root)


def _directory(args: dict[str, Any], lead_cwd: Path) -> Path:
    """The teammate's working directory: the lead's unless the call names one (relative to the lead's)."""
    raw = args.get("cwd")
    if raw is None or raw == "":
        return lead_cwd
    if args.get("isolation") == "worktree":  # as in Claude Code: the worktree is its directory
        raise ToolInputError('cwd and isolation: "worktree" cannot go together: choose one')
    if not isinstance(raw, str):
        raise ToolInputError("cwd must be a directory path (a string)")
    path = (lead_cwd / Path(raw).expanduser()).resolve()
    if not path.is_dir():
        raise ToolInputError(f"cwd {raw!r} is not a directory ({path})")
    return lead_cwd if path == lead_cwd.resolve() else path  # the lead's own, however it was spelt


def _rules(args: dict[str, Any], key: str) -> list[str]:
    """A list of permission rules in Claude Code's syntax (`Bash(rm:*)`, `Edit(src/**)`), each one checked now."""
    raw = args.get(key)
    if raw is None:
        return []
    values = [raw] if isinstance(raw, str) else raw
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ToolInputError(f'{key} must be a list of permission rules, e.g. ["Bash(rm:*)", "WebFetch"]')
    try:
        parse_rules(values, key)
    except PermissionRuleError as e:
        raise ToolInputError(f"{key}: {e}") from None
    return [v for v in values if v.strip()]
