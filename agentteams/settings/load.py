"""Reading and merging the settings files with Claude Code's precedence, keeping where each value came from.

Scalars: the higher scope wins key by key; objects merge; arrays concatenate (deduplicated) across scopes.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, cast

from agentteams.errors import AgentTeamsError
from agentteams.settings.types import (
    DEFAULT_MODES,
    SCOPES,
    TEAMMATE_MODES,
    Permissions,
    Scope,
    Settings,
    Source,
    TeammateMode,
)
from agentteams.store.paths import config_root

MANAGED_PATH = Path("/etc/claude-code/managed-settings.json")  # Claude Code's system-wide file on Linux
RULE_LISTS = ("allow", "deny", "ask", "additionalDirectories")
PERMISSION_KEYS = (*RULE_LISTS, "defaultMode", "disableBypassPermissionsMode", "disableAutoMode")
IGNORED = "the file is ignored, as Claude Code does: fix it and start again"
# what a file with a wrong value does not grant until it is fixed: Claude Code ignores such a file whole, so
# applying these would let it allow more than Claude Code; its deny and ask rules still apply (safer than that)
GRANTS = ("permissions.allow", "permissions.additionalDirectories", "permissions.defaultMode", "hooks", "env",
          "apiKeyHelper", "enableAllProjectMcpServers", "enabledMcpjsonServers")  # fmt: skip
STRICT_MODES = ("default", "manual", "plan", "dontAsk")  # a mode that asks at least as much as the default


class SettingsError(AgentTeamsError):
    """`--settings` names a missing file or holds JSON that cannot be read: the run does not start (as Claude Code)."""


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "number", float: "number"}.get(type(value), "null")


def validate(data: Any) -> list[tuple[str, str]]:
    """What is wrong with the keys we read, each as (dotted key, `expected X, got Y`); top-level keys we do not
    read are not checked (Claude Code has many more, and a newer one is no error)."""
    if not isinstance(data, dict):
        return [("", f"expected a JSON object, got {_kind(data)}")]
    wrong: list[tuple[str, str]] = []

    def expect(path: str, value: Any, kind: str, choices: tuple[str, ...] = ()) -> None:
        if _kind(value) != kind or (kind == "number" and not isinstance(value, int)):
            wrong.append((path, f"expected {'an integer' if kind == 'number' else kind}, got {_kind(value)}"))
        elif choices and value not in choices:
            wrong.append((path, f"expected one of {', '.join(choices)}, got {value!r}"))

    for key, kind in (("model", "string"), ("apiKeyHelper", "string"), ("hooks", "object"), ("env", "object")):
        if key in data:
            expect(key, data[key], kind)
    if "teammateMode" in data:
        expect("teammateMode", data["teammateMode"], "string", TEAMMATE_MODES)
    if "cleanupPeriodDays" in data:
        expect("cleanupPeriodDays", data["cleanupPeriodDays"], "number")
    for name, value in (data.get("env") or {}).items() if isinstance(data.get("env"), dict) else ():
        expect(f"env.{name}", value, "string")
    perms = data.get("permissions")
    if "permissions" in data and not isinstance(perms, dict):
        expect("permissions", perms, "object")
    elif isinstance(perms, dict):
        wrong += _permission_problems(perms)
    return wrong


def _permission_problems(perms: dict[str, Any]) -> list[tuple[str, str]]:
    wrong = [(f"permissions.{n}", "not a permissions setting this version knows") for n in perms
             if n not in PERMISSION_KEYS]  # fmt: skip
    mode = perms.get("defaultMode")
    if "defaultMode" in perms and (not isinstance(mode, str) or mode not in DEFAULT_MODES):
        got = repr(mode) if isinstance(mode, str) else _kind(mode)
        wrong.append(("permissions.defaultMode", f"expected one of {', '.join(DEFAULT_MODES)}, got {got}"))
    for name in (n for n in RULE_LISTS if n in perms):
        if not isinstance(perms[name], list):
            wrong.append((f"permissions.{name}", f"expected array, got {_kind(perms[name])}"))
            continue
        wrong += [(f"permissions.{name}[{i}]", f"expected string, got {_kind(item)}")
                  for i, item in enumerate(perms[name]) if not isinstance(item, str)]  # fmt: skip
    return wrong


def parse_file(path: Path, scope: Scope) -> tuple[dict[str, Any] | None, list[str]]:
    """A settings file's data, or None and why it did not load (a missing file is no problem, only absent)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, []
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        return None, [f"{scope} settings {path}: cannot be read ({reason}); {IGNORED}"]
    return parse_text(text, str(path), scope)


def parse_text(text: str, where: str, scope: Scope) -> tuple[dict[str, Any] | None, list[str]]:
    if not text.strip():
        return {}, []  # an empty file sets nothing
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return None, [f"{scope} settings {where}:{e.lineno}:{e.colno}: not valid JSON ({e.msg}); {IGNORED}"]
    wrong = validate(data)
    if wrong and not isinstance(data, dict):
        return None, [f"{scope} settings {where} ({wrong[0][1]}); {IGNORED}"]
    return without_wrong(cast(dict[str, Any], data), wrong, f"{scope} settings {where}")


def without_wrong(data: dict[str, Any], wrong: list[tuple[str, str]], where: str) -> tuple[dict[str, Any], list[str]]:
    """The file with each wrong value left out, one warning line per key. A wrong entry of a rule list costs only
    that entry (as Claude Code); any other wrong value also holds back what the file grants (GRANTS), which
    Claude Code would not apply either, while its deny and ask rules stay in force."""
    problems = [f"{where}: {path} ({why}) is ignored" for path, why in wrong]
    unknown = {path for path, _ in wrong if path.startswith("permissions.") and path[12:] not in PERMISSION_KEYS}
    entries = {path for path, _ in wrong if path.endswith("]")} | unknown
    for path, _ in wrong:
        if path not in entries:
            _remove(data, path)
    perms = data.get("permissions")
    if entries and isinstance(perms, dict):
        for name in RULE_LISTS:
            if isinstance(perms.get(name), list):
                perms[name] = [v for i, v in enumerate(perms[name]) if f"permissions.{name}[{i}]" not in entries]
    if len(entries) < len(wrong):
        held = [g for g in GRANTS if _held(data, g)]
        for grant in held:
            _remove(data, grant)
        if held:
            problems[-1] += f"; until it is fixed, so is what the file grants ({', '.join(held)}); its deny rules apply"
    return data, problems


def _held(data: dict[str, Any], dotted: str) -> bool:
    """Whether the file sets this grant (a mode that asks at least as often as the default is no grant)."""
    head, _, tail = dotted.partition(".")
    value = data.get(head)
    if tail:
        value = value.get(tail) if isinstance(value, dict) else None
    return value is not None and not (dotted == "permissions.defaultMode" and value in STRICT_MODES)


def _remove(data: dict[str, Any], dotted: str) -> None:
    head, _, tail = dotted.partition(".")
    if not tail:
        data.pop(head, None)
    elif isinstance(data.get(head), dict):
        data[head].pop(tail, None)


def flag_layer(value: str) -> tuple[dict[str, Any] | None, Source, list[str]]:
    """`--settings FILE_OR_JSON`: inline JSON when it starts with `{`, else a path. JSON that cannot be parsed or a
    missing file stops the run (SettingsError); a wrong type only leaves the layer out, as for a file (Claude Code)."""
    if value.lstrip().startswith("{"):
        source = Source("flag", "--settings JSON")
        try:
            data = json.loads(value)
        except json.JSONDecodeError as e:
            raise SettingsError(f"invalid JSON given to --settings (line {e.lineno}, column {e.colno}: {e.msg})") from e
        wrong = validate(data)
        if wrong and not isinstance(data, dict):
            return None, source, [f"--settings JSON ({wrong[0][1]}); it is ignored, as Claude Code does"]
        kept, problems = without_wrong(cast(dict[str, Any], data), wrong, "--settings JSON")
        return kept, source, problems
    path = Path(value).expanduser()
    if not path.is_file():
        raise SettingsError(f"settings file not found: {value}")
    text = path.read_text(encoding="utf-8")
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        raise SettingsError(f"invalid JSON in --settings file {path}:{e.lineno}:{e.colno} ({e.msg})") from e
    data, problems = parse_text(text, str(path), "flag")
    return data, Source("flag", str(path)), problems


def paths_for(cwd: Path, root: Path | None = None) -> dict[Scope, Path]:
    """The file of each file scope for a project at `cwd` (Claude Code reads the launch directory's `.claude/`)."""
    base = root if root is not None else config_root()
    return {"user": base / "settings.json", "project": cwd / ".claude" / "settings.json",
            "local": cwd / ".claude" / "settings.local.json", "managed": MANAGED_PATH}  # fmt: skip


def load_settings(
    cwd: Path,
    *,
    flag: str | None = None,
    root: Path | None = None,
    managed: Path | None = MANAGED_PATH,
    scopes: tuple[Scope, ...] = SCOPES,
) -> Settings:
    """Every scope of `scopes` merged, lowest first: user, project, local, `--settings`, managed (`--restricted`
    reads only the last two)."""
    files = paths_for(cwd, root)
    merged: dict[str, Any] = {}
    origins: dict[str, Source] = {}
    problems: list[str] = []
    for scope in (s for s in SCOPES if s in scopes):
        if scope == "flag":
            if flag is None:
                continue
            loaded, source, found = flag_layer(flag)
        else:
            path = managed if scope == "managed" else files[scope]
            if path is None:
                continue
            loaded, found = parse_file(path, scope)
            source = Source(scope, str(path))
            found += _drop_repo_bypass(loaded, scope, path)
        problems += found
        if loaded is not None:
            _merge(merged, loaded, source, origins, "")
    return dataclasses.replace(typed(merged, origins, tuple(problems)), sources=tuple(scopes))


def _drop_repo_bypass(data: dict[str, Any] | None, scope: Scope, path: Path) -> list[str]:
    """A repository's own files cannot start a session in bypassPermissions mode (as Claude Code 2.1.330):
    only the user's settings, a flag or `--settings` can. Drops it from `data`; the warning if it did."""
    perms = data.get("permissions") if data is not None and scope in ("project", "local") else None
    if not isinstance(perms, dict) or perms.get("defaultMode") != "bypassPermissions":
        return []
    del perms["defaultMode"]
    return [f"{scope} settings {path}: permissions.defaultMode \"bypassPermissions\" is ignored in a project's "
            "settings; set it in your user settings or pass --permission-mode"]  # fmt: skip


def _drop(origins: dict[str, Source], path: str) -> None:
    for key in [k for k in origins if k == path or k.startswith((path + ".", path + "["))]:
        del origins[key]


def _merge(into: dict[str, Any], data: dict[str, Any], src: Source, origins: dict[str, Source], prefix: str) -> None:
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else key
        old = into.get(key)
        if isinstance(value, dict):
            if not isinstance(old, dict):
                _drop(origins, path)
                old = into[key] = {}
            _merge(old, value, src, origins, path)
        elif isinstance(value, list):
            if not isinstance(old, list):
                _drop(origins, path)
                old = into[key] = []
            for item in value:
                if item not in old:  # concatenated across scopes, each entry once
                    origins[f"{path}[{len(old)}]"] = src
                    old.append(item)
                elif src.scope == "managed" and path.startswith("hooks."):
                    # the policy's hook stays the policy's when a lower file holds the same group (--bare and
                    # --safe-mode keep the managed file's hooks only: a copy must not take it away)
                    origins[f"{path}[{old.index(item)}]"] = src
        else:
            _drop(origins, path)
            into[key] = value
            origins[path] = src


def typed(merged: dict[str, Any], origins: dict[str, Source], problems: tuple[str, ...] = ()) -> Settings:
    perms = merged.get("permissions") or {}
    teammate_mode = merged.get("teammateMode")
    return Settings(
        permissions=Permissions(
            allow=tuple(perms.get("allow", ())), deny=tuple(perms.get("deny", ())), ask=tuple(perms.get("ask", ())),
            default_mode=perms.get("defaultMode"),
            additional_directories=tuple(perms.get("additionalDirectories", ())),
        ),
        env=dict(merged.get("env") or {}), model=merged.get("model"), hooks=dict(merged.get("hooks") or {}),
        teammate_mode=cast(TeammateMode, teammate_mode) if teammate_mode in TEAMMATE_MODES else None,
        cleanup_period_days=merged.get("cleanupPeriodDays"), api_key_helper=merged.get("apiKeyHelper"),
        merged=merged, origins=origins, problems=problems,
    )  # fmt: skip
