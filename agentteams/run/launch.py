"""`agentteams launch team.toml [PROMPT]` composed: the lead built as `agentteams [PROMPT]` builds it (settings, then
flags, then the team file's lead model), with the file's team made and its roles spawned before the first turn."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING

from agentteams.agent.session import SessionOptions
from agentteams.run import headless
from agentteams.run.agent import configured, load_settings_here
from agentteams.run.launch_bypass import bypass_roles, confirm
from agentteams.run.precedence import Asked, choose
from agentteams.team.teamfile.seeding import TeamSeed

if TYPE_CHECKING:
    from agentteams.team.teamfile.schema import TeamFile


def start(
    spec: TeamFile, prompt: str | None, print_mode: bool, output_format: str, model: str | None,
    permission_mode: str | None, skip_permissions: bool, teammate_mode: str | None, teammate_command: str | None,
    file: Path | None = None,
) -> int:  # fmt: skip
    """The lead, composed as `agentteams [PROMPT]` composes it (settings, then flags), with the file's team."""
    headless.check_flags(headless.Flags(print_mode, output_format, "text", output_format == "stream-json", None))
    cwd = Path.cwd()
    if not print_mode:
        from agentteams.run.trust_question import ensure_trusted

        ensure_trusted(cwd)  # as `agentteams` itself: nothing of an untrusted folder applies before the person says so
    found = load_settings_here(cwd)
    asked = Asked(model, permission_mode, skip_permissions, teammate_mode, teammate_command, file_model=spec.lead_model)
    chosen = choose(asked, configured(found), os.environ, default_model="sonnet")
    roles = bypass_roles([(r.name, r.mode) for r in spec.roles])
    if roles and chosen.permission_mode != "bypassPermissions":  # else a role would fail to start, no way on
        confirm(file or Path(f"{spec.name}.toml"), roles, interactive=False if print_mode else None)
        asked = dataclasses.replace(asked, skip_permissions=True)
        chosen = choose(asked, configured(found), os.environ, default_model="sonnet")
    options = SessionOptions(
        cwd=cwd, model=chosen.model, permission_mode=chosen.permission_mode, interactive=not print_mode, settings=found
    )
    where, command = chosen.teammate_mode, chosen.teammate_command
    seed = TeamSeed(spec)
    if not print_mode:
        from agentteams.run import interactive

        return interactive.run(prompt, options, teammate_mode=where, teammate_command=command, seed=seed)
    return headless.run(prompt or "", options, output_format, teammate_mode=where, teammate_command=command, seed=seed)
