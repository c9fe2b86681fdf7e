"""A team file whose roles bypass permissions (one exported from a lead that bypassed them) launched by a lead that
does not: a teammate may bypass them only while its lead does, so the person is asked once whether the whole team
may (headless: refused, naming the flag that says yes), instead of a role failing to start with no way on."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from agentteams.errors import AgentTeamsError

QUESTION = """{file} runs {roles} with permissions bypassed (mode bypassPermissions): their commands and edits run
without asking. A teammate can bypass permissions only while its lead does, so this launch would bypass them for the
lead and the whole team.

  1. Yes, launch with permissions bypassed
  2. No, exit
"""


def bypass_roles(roles: list[tuple[str, str | None]]) -> list[str]:
    """The names of the roles (name, mode) that bypass permissions."""
    return [name for name, mode in roles if mode == "bypassPermissions"]


def confirm(
    file: Path, roles: list[str], *, interactive: bool | None = None, ask: Callable[[str], str] = input
) -> None:
    """Return once the person said the team may bypass permissions; AgentTeamsError (one line saying how to go on)
    when they say no or there is nobody to ask."""
    names = ", ".join(repr(r) for r in roles)
    how = f"run agentteams launch {file} --dangerously-skip-permissions, or give {names} another mode in the file"
    if not (sys.stdin.isatty() if interactive is None else interactive):
        raise AgentTeamsError(f"{file}: {names} bypass{'es' if len(roles) == 1 else ''} permissions, which a "
                              f"teammate may only while its lead does: {how}")  # fmt: skip
    what = f"role {names}" if len(roles) == 1 else f"roles {names}"
    print(QUESTION.format(file=file, roles=what), flush=True)
    try:
        answer = ask("Enter 1 or 2: ").strip().lower()
    except EOFError:
        answer = ""
    if answer not in ("1", "y", "yes"):
        raise AgentTeamsError(f"not launched: {how}")
