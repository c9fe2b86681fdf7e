"""The typed result of merging settings files: `Settings`, its `Permissions`, and where each value came from."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Scope = Literal["user", "project", "local", "flag", "managed"]
TeammateMode = Literal["auto", "tmux", "in-process"]
# lowest to highest: a later scope's scalar wins, arrays are concatenated in this order (Claude Code's)
SCOPES: tuple[Scope, ...] = ("user", "project", "local", "flag", "managed")
TEAMMATE_MODES: tuple[TeammateMode, ...] = ("auto", "tmux", "in-process")
# `permissions.defaultMode` values Claude Code takes (a lead may pass `bubble` to a teammate), plus ours (delegate)
DEFAULT_MODES = (
    "default",
    "manual",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "dontAsk",
    "auto",
    "bubble",
    "delegate",
)


@dataclass(frozen=True)
class Source:
    """Where a value came from: the scope and the file (or `--settings` inline JSON)."""

    scope: Scope
    path: str

    def __str__(self) -> str:
        return f"{self.scope} ({self.path})"


@dataclass(frozen=True)
class Permissions:
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    default_mode: str | None = None
    additional_directories: tuple[str, ...] = ()


@dataclass(frozen=True)
class Settings:
    """The merged settings. `merged` is the raw merged JSON (unknown keys too); `origins` maps each value's
    dotted path (`permissions.allow[0]`, `env.FOO`, `model`) to its `Source`."""

    permissions: Permissions = field(default_factory=Permissions)
    env: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    hooks: dict[str, Any] = field(default_factory=dict)  # carried raw; the hooks runner reads it
    teammate_mode: TeammateMode | None = None
    cleanup_period_days: int | None = None
    api_key_helper: str | None = None
    merged: dict[str, Any] = field(default_factory=dict)
    origins: dict[str, Source] = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # one line each: a value or a file that was not applied, and why
    # the scopes read (`--setting-sources`, `--restricted`): the user's and the project's commands and agent files
    # are read only when their scope is
    sources: tuple[Scope, ...] = SCOPES

    def for_teammate(self) -> str | None:
        """The JSON a lead passes as a teammate's `--settings`: the merged settings without `env`, whose values
        may be secrets (argv is world-readable in `ps`); a teammate reads the same files' `env` itself.
        None when there is nothing to pass."""
        data = {k: v for k, v in self.merged.items() if k != "env"}
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False) if data else None
