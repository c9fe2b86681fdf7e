"""Writing into a settings file: permission rules as Claude Code saves an answer "don't ask again" for a destination
(`localSettings`, `projectSettings`, `userSettings`), each rule once, and any other change; every other key kept, the
file replaced whole; a file that is not a JSON object is left as it is (the change then holds for the session only)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

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

    def add(data: dict[str, Any]) -> None:
        permissions = data.setdefault("permissions", {})
        listed = permissions.setdefault(behavior, []) if isinstance(permissions, dict) else None
        if not isinstance(listed, list):
            raise AgentTeamsError(f"{path}: permissions.{behavior} is not a list: the rule was not saved there")
        listed += [rule for rule in rules if rule not in listed]

    return edit_file(path, add, "the rule was not saved there")


def edit_file(path: Path, change: Callable[[dict[str, Any]], None], unsaved: str) -> Path:
    """The settings file at `path` (made when missing) read, changed in place by `change` and replaced whole; its
    path. An AgentTeamsError ending in `unsaved` says why the file was left alone."""
    raw = read_bytes(path)
    try:
        data = json.loads(raw) if raw and raw.strip() else {}
    except ValueError as e:
        raise AgentTeamsError(f"{path} is not valid JSON ({e}): {unsaved}") from None
    if not isinstance(data, dict):
        raise AgentTeamsError(f"{path} is not a JSON object: {unsaved}")
    change(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, data)
    return path
