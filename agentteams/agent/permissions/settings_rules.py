"""Permission rules from the settings files: each labelled with the file it came from, and a project file's
`/path` rules rooted at its project."""

from __future__ import annotations

from pathlib import Path

from agentteams import diagnostics
from agentteams.agent.permissions.policy import PermissionRuleError, Rule, parse_rule
from agentteams.settings.types import Settings, Source


def settings_rules(settings: Settings, kind: str) -> list[Rule]:
    """`permissions.<kind>` rules, each labelled with the file it came from; an unreadable one is skipped
    with a warning (one bad line in a shared file should not stop every run)."""
    rules: list[Rule] = []
    for i, text in enumerate(getattr(settings.permissions, kind)):
        origin = settings.origins.get(f"permissions.{kind}[{i}]")
        try:
            rules.append(parse_rule(text, str(origin) if origin else "settings", _rule_root(origin)))
        except PermissionRuleError as e:
            diagnostics.warning("%s (permissions.%s in %s): skipped", e, kind, origin or "settings")
    return rules


def _rule_root(origin: Source | None) -> Path | None:
    """What a settings rule's `/path` is relative to: a project file's project, the user file's directory."""
    if origin is None or origin.scope == "flag":
        return None
    path = Path(origin.path)
    return path.parent.parent if origin.scope in ("project", "local") else path.parent
