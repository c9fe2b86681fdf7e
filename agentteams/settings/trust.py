"""Workspace trust as Claude Code keeps it: whether a folder was trusted (its settings, `env`, hooks, MCP servers,
commands and agents may apply), read from and written to Claude Code's own state file, so a folder trusted in one
CLI is trusted in the other."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentteams.errors import AgentTeamsError
from agentteams.store.fs.atomic_json import atomic_write_json

SANDBOXED_VAR = "CLAUDE_CODE_SANDBOXED"  # Claude Code's own: a sandboxed run trusts its folder
ACCEPTED = "hasTrustDialogAccepted"


def state_file() -> Path:
    """Claude Code's state file (`claude mcp add` keeps user and local servers there, and the trust records)."""
    root = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(root) / ".claude.json" if root else Path.home() / ".claude.json"


def read_state() -> dict[str, Any]:
    """The state file's object; empty when it is missing or unreadable (then nothing is trusted)."""
    try:
        data = json.loads(state_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _repository_root(folder: Path) -> Path | None:
    return next((d for d in (folder, *folder.parents) if (d / ".git").exists()), None)


def trusted_by(folder: Path, env: Mapping[str, str] | None = None) -> str | None:
    """What trusts `folder`: its own record, or that of a folder above it (inside a repository, up to its root only,
    as Claude Code walks), or a sandboxed run; None when it is not trusted."""
    if (os.environ if env is None else env).get(SANDBOXED_VAR):
        return SANDBOXED_VAR
    projects = read_state().get("projects")
    if not isinstance(projects, dict):
        return None
    here = folder.resolve()
    root = _repository_root(here)
    for d in (here, *here.parents):
        record = projects.get(str(d))
        if isinstance(record, dict) and record.get(ACCEPTED) is True:
            return str(d)
        if d == root:
            return None
    return None


def trust(folder: Path) -> None:
    """Remember that the person trusts `folder` (its record merged, every other key of the file kept). A state file
    that cannot be read as an object is claude's too: left as it is (AgentTeamsError), never replaced."""
    path = state_file()
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        state = {}
    except (OSError, ValueError) as e:
        raise AgentTeamsError(f"cannot record the trust in {path}: not JSON ({e}); left as it is") from None
    if not isinstance(state, dict):
        raise AgentTeamsError(f"cannot record the trust in {path}: it holds no JSON object; left as it is")
    projects = state.setdefault("projects", {})
    if not isinstance(projects, dict):
        projects = state["projects"] = {}
    record = projects.setdefault(str(folder.resolve()), {})
    if not isinstance(record, dict):
        record = projects[str(folder.resolve())] = {}
    record[ACCEPTED] = True
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, state)
