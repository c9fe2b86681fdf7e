"""One top-level section of a settings file, read or removed (`auto-mode reset`): the file replaced whole and
atomically, every other key kept; a file that is not a JSON object is left as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentteams.errors import AgentTeamsError
from agentteams.store.fs.atomic_json import atomic_write_json, read_bytes


def read_object(path: Path, error: type[AgentTeamsError] = AgentTeamsError) -> dict[str, Any]:
    """The file's object ({} when it is missing or empty); `error` when it holds anything else, so that a write never
    replaces a file it could not read (a settings file, claude's state file)."""
    raw = read_bytes(path)
    if raw is None or not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise error(f"{path} is not valid JSON ({e}): left as it is") from None
    if not isinstance(data, dict):
        raise error(f"{path} is not a JSON object: left as it is")
    return data


def read_section(path: Path, key: str) -> Any:
    """The section's value, or None when the file or the key is missing."""
    return read_object(path).get(key)


def drop_section(path: Path, key: str) -> None:
    data = read_object(path)
    if key in data:
        del data[key]
        atomic_write_json(path, data)
