"""The merged settings as rows a person reads (`agentteams config`, the REPL's `/config` and `/status`): each value
with the file it came from, secret-looking `env` values masked, and which settings files were loaded."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentteams.settings.keyhelper import KEY_VARS
from agentteams.settings.load import paths_for
from agentteams.settings.types import Settings, Source

# env values under such names are shown masked: a user's settings may hold a token there (Claude Code allows it)
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
MASK = "***"


@dataclass(frozen=True)
class SettingRow:
    key: str  # the dotted path, as `Settings.origins` spells it: `permissions.allow[0]`, `env.FOO`
    value: Any
    source: Source | None

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "scope": self.source.scope if self.source else None,
                "file": self.source.path if self.source else None}  # fmt: skip


def leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """(dotted path, scalar) for every value, in the paths `Settings.origins` uses."""
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list) and value:
        return [leaf for i, v in enumerate(value) for leaf in leaves(v, f"{path}[{i}]")]
    return [(path, value)]


def masked(path: str, value: Any) -> Any:
    name = path.removeprefix("env.")
    return MASK if path.startswith("env.") and SECRET_NAME.search(name) else value


def origin_of(origins: Mapping[str, Source], path: str) -> Source | None:
    """The source of a leaf: its own, or that of the array element or object it sits in."""
    while path not in origins and path:
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return origins.get(path)


def setting_rows(settings: Settings) -> list[SettingRow]:
    """Every value of the merged settings, masked where secret, with its source."""
    return [
        SettingRow(path, masked(path, value), origin_of(settings.origins, path))
        for path, value in leaves(settings.merged)
        if path
    ]


def format_rows(rows: list[SettingRow]) -> list[str]:
    """`key  value  (scope: file)`, keys aligned."""
    if not rows:
        return ["no settings: none of the settings files exists or sets anything"]
    width = max(len(r.key) for r in rows)
    lines = []
    for row in rows:
        where = f"{row.source.scope}: {row.source.path}" if row.source else "?"
        lines.append(f"{row.key:<{width}}  {json.dumps(row.value, ensure_ascii=False)}  ({where})")
    return lines


def masked_settings(settings: Settings) -> dict[str, Any]:
    """The merged settings JSON with secret-looking `env` values masked."""
    copy: dict[str, Any] = json.loads(json.dumps(settings.merged))
    env = copy.get("env")
    if isinstance(env, dict):
        for name in env:
            env[name] = masked(f"env.{name}", env[name])
    return copy


def loaded_files(settings: Settings, cwd: Path, root: Path | None = None) -> list[str]:
    """One line per settings file that exists (scope and path, and why it did not load if it did not), and
    `--settings` when given."""
    lines = []
    for scope, path in paths_for(cwd, root).items():
        if not path.is_file():
            continue
        failed = next((p for p in settings.problems if str(path) in p), None)
        lines.append(f"{scope}: {path}" + (" (not loaded: see the warning at start-up)" if failed else ""))
    flags = sorted({s.path for s in settings.origins.values() if s.scope == "flag"})
    lines += [f"flag: --settings {f}" for f in flags]
    return lines


def key_source(settings: Settings, environ: Mapping[str, str]) -> str:
    """Where the model client's credential comes from, never the credential itself."""
    for name in KEY_VARS:
        if environ.get(name, "").strip():
            origin = settings.origins.get(f"env.{name}")
            return f"{name} from {'the env of ' + str(origin) if origin else 'the environment'}"
    if settings.api_key_helper:
        origin = settings.origins.get("apiKeyHelper")
        return f"apiKeyHelper ({origin})" if origin else "apiKeyHelper"
    return "none"
