"""Which value a run uses when the command line, the settings files and the environment each may name one: flags
first, then the environment where Claude Code reads it, then the settings, then our defaults. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agentteams.errors import AgentTeamsError
from agentteams.tools.runtime_hooks import MODE_ALIASES

TEAMMATE_MODES = ("auto", "tmux", "in-process")
PERMISSION_ALIASES = MODE_ALIASES  # Claude Code's modes taken as ours (tools/runtime_hooks.py says why)


@dataclass(frozen=True)
class Asked:
    """What the command line (and a team file, for `launch`) named; None: not named there."""

    model: str | None = None
    permission_mode: str | None = None
    skip_permissions: bool = False
    teammate_mode: str | None = None
    teammate_command: str | None = None
    file_model: str | None = None  # a team file's lead model (`launch`): after the flag, before the environment


@dataclass(frozen=True)
class Configured:
    """What the merged settings files named; None: not named there."""

    model: str | None = None
    permission_mode: str | None = None  # permissions.defaultMode
    teammate_mode: str | None = None


@dataclass(frozen=True)
class Chosen:
    model: str
    permission_mode: str
    teammate_mode: str
    teammate_command: str | None


def choose(asked: Asked, configured: Configured, env: Mapping[str, str], *, default_model: str = "default") -> Chosen:
    """Each value from the first place that names it. The model: --model, the team file's, ANTHROPIC_MODEL, the
    settings' `model`, then `default_model` (Claude Code's order); the permission mode: --dangerously-skip-permissions,
    --permission-mode, the settings' defaultMode, then default (an alias of Claude Code's taken as ours)."""
    if asked.teammate_mode is not None and asked.teammate_mode not in TEAMMATE_MODES:
        raise AgentTeamsError(
            f"--teammate-mode must be one of {', '.join(TEAMMATE_MODES)}, got {asked.teammate_mode!r}"
        )
    wanted = asked.permission_mode or configured.permission_mode or "default"
    mode = "bypassPermissions" if asked.skip_permissions else PERMISSION_ALIASES.get(wanted, wanted)
    model = (
        asked.model or asked.file_model or env.get("ANTHROPIC_MODEL", "").strip() or configured.model or default_model
    )
    return Chosen(
        model=model,
        permission_mode=mode,
        teammate_mode=asked.teammate_mode or configured.teammate_mode or "auto",
        teammate_command=asked.teammate_command or env.get("CLAUDE_CODE_TEAMMATE_COMMAND") or None,
    )
