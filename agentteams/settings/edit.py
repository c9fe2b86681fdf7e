"""Permission rules written into a settings file, as Claude Code saves an answer "don't ask again" for a destination
(`localSettings`, `projectSettings`, `userSettings`): every other key kept, each rule once, the file replaced whole;
a file that is not a JSON object is left as it is (the rule then holds for the session only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from agentteams.errors import AgentTeamsError
from agentteams.settings.load import paths_for
from agentteams.store.fs.atomic_json import atomic_write_json, read_bytes

Destination = Literal["localSettings", "projectSettings", "userSettings"]
SCOPE_OF: dict[str, Literal["local", "project", "user"]] = {
    "localSettings": "local", "projectSettings": "project", "userSettings": "user",
}  # fmt: skip


def add_rules(cwd: Path, destination: str, behavior: str, rules: list[str]) -> Path:
    """Add `rules` to `permissions.<behavior>` of the destination's file (made when missing); its path. An
    AgentTeamsError says why the file was left alone."""
    scope = SCOPE_OF.get(destination)
    if scope is None:
        raise AgentTeamsError(f"rules are not saved to {destination!r}")
    path = paths_for(cwd)[scope]
    raw = read_bytes(path)
    try:
        data = json.loads(raw) if raw and raw.strip() else {}
    except ValueError as e:
        raise AgentTeamsError(f"{path} is not valid JSON ({e}): the rule was not saved there") from None
    if not isinstance(data, dict):
        raise AgentTeamsError(f"{path} is not a JSON object: the rule was not saved there")
    permissions = data.setdefault("permissions", {})
    listed = permissions.setdefault(behavior, []) if isinstance(permissions, dict) else None
    if not isinstance(listed, list):
        raise AgentTeamsError(f"{path}: permissions.{behavior} is not a list: the rule was not saved there")
    listed += [rule for rule in rules if rule not in listed]
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, data)
    return path
