"""Claude Code's installed plugins as `claude plugin list` reads them: `$CLAUDE_CONFIG_DIR/plugins/
installed_plugins.json` (version 2: each id's installations by scope), enabled by `enabledPlugins` in settings."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentteams.store.paths import config_root


@dataclass(frozen=True)
class Installed:
    """One installation of a plugin, as the file records it."""

    id: str
    scope: str
    version: str
    install_path: str
    enabled: bool
    raw: Mapping[str, Any]


def installed(settings: Mapping[str, Any]) -> list[Installed]:
    """Every installation in the file's order; [] when the file is missing or unreadable."""
    path = config_root() / "plugins" / "installed_plugins.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    plugins = data.get("plugins") if isinstance(data, dict) else None
    enabled = settings.get("enabledPlugins")
    on = enabled if isinstance(enabled, dict) else {}
    found = []
    for pid, installs in plugins.items() if isinstance(plugins, dict) else ():
        for one in installs if isinstance(installs, list) else ():
            if isinstance(one, dict):
                found.append(Installed(str(pid), str(one.get("scope", "user")), str(one.get("version", "unknown")),
                                       str(one.get("installPath", "")), on.get(pid) is True, one))  # fmt: skip
    return found
