"""A team file (`agentteams launch team.toml`): its typed shape, read with tomllib and checked before anything starts;
every refusal names the file's line and the reason. The one owner of tomllib."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentteams.errors import AgentTeamsError
from agentteams.model.aliases import UnknownModelError, known_model
from agentteams.store.paths import LEAD_NAME
from agentteams.team.spawn.base import NAME_PATTERN
from agentteams.team.teamfile.toml_positions import Path as KeyPath
from agentteams.team.teamfile.toml_positions import key_lines, line_of
from agentteams.tools.runtime_hooks import PERMISSION_MODES

Isolation = Literal["worktree", "none"]  # "none" opts a role out of a team-wide "worktree"
ISOLATIONS: tuple[str, ...] = ("worktree", "none")
# what each table may hold, and of which TOML type (a float key takes integers too)
TEAM_KEYS: dict[str, type] = {"name": str, "description": str, "isolation": str}
LEAD_KEYS: dict[str, type] = {"instructions": str, "model": str}
ROLE_KEYS: dict[str, type] = {
    "name": str, "prompt": str, "agent_type": str, "model": str, "mode": str, "allowed_tools": list,
    "disallowed_tools": list, "cwd": str, "isolation": str, "max_budget_tokens": int, "max_budget_usd": float,
    "node": str,
}  # fmt: skip
TASK_KEYS: dict[str, type] = {"id": str, "subject": str, "description": str, "owner": str, "blocked_by": list}
TOP_KEYS: dict[str, type] = {"team": dict, "lead": dict, "role": list, "task": list}
_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", list: "an array", dict: "a table"}


class TeamFileError(AgentTeamsError):
    """A team file that cannot start a team: `path:line: reason`."""


@dataclass(frozen=True)
class Role:
    """One teammate the lead spawns, by the Task tool's field names once turned into spawn arguments."""

    name: str
    prompt: str = ""
    agent_type: str | None = None
    model: str | None = None
    mode: str | None = None
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    cwd: str | None = None
    isolation: Isolation | None = None
    max_budget_tokens: int | None = None
    max_budget_usd: float | None = None
    node: str | None = None  # the node it runs on (`agentteams node`); default: the least loaded, else the lead's


@dataclass(frozen=True)
class SeedTask:
    """A task the lead creates before its first turn; `blocked_by` names other seed tasks by `id`."""

    id: str
    subject: str
    description: str = ""
    owner: str | None = None
    blocked_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class TeamFile:
    """What a checked team file declares: the team, the lead's instructions and model, its roles and seed tasks."""

    name: str
    description: str | None = None
    isolation: Isolation | None = None  # every role's unless it says otherwise
    instructions: str = ""  # the lead's own, given to its model with the launch prompt
    lead_model: str | None = None
    roles: tuple[Role, ...] = ()
    tasks: tuple[SeedTask, ...] = ()


class _Checker:
    """Reads the parsed tables, raising at the first problem with its line."""

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.lines = key_lines(text)

    def fail(self, path: KeyPath, reason: str) -> TeamFileError:
        return TeamFileError(f"{self.source}:{line_of(self.lines, path)}: {reason}")

    def table(self, data: dict[str, Any], path: KeyPath, keys: dict[str, type], what: str) -> dict[str, Any]:
        """`data` with unknown keys and wrong types refused."""
        for k, v in data.items():
            kind = keys.get(k)
            if kind is None:
                raise self.fail((*path, k), f"unknown key {k!r} in {what} (known: {', '.join(keys)})")
            if not _fits(v, kind):
                raise self.fail((*path, k), f"{what}: {k!r} must be {_TYPE_NAMES[kind]}, not {_toml_type(v)}")
            if kind is list and keys is not TOP_KEYS and not all(isinstance(x, str) for x in v):
                raise self.fail((*path, k), f"{what}: {k!r} must be an array of strings")
        return data

    def model(self, name: str | None, path: KeyPath, what: str) -> None:
        try:
            known_model(name) if name is not None else None
        except UnknownModelError as e:
            raise self.fail(path, f"{what}: {e}") from None

    def choice(self, value: str | None, allowed: tuple[str, ...], path: KeyPath, what: str) -> Any:
        if value is not None and value not in allowed:
            raise self.fail(path, f"{what} must be one of {', '.join(allowed)}, not {value!r}")
        return value


def _fits(value: Any, kind: type) -> bool:
    if isinstance(value, bool):
        return kind is bool
    return isinstance(value, (int, float) if kind is float else kind)


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return next((n for k, n in _TYPE_NAMES.items() if isinstance(value, k)), type(value).__name__)


def load(path: Path) -> TeamFile:
    """Read and check a team file; TeamFileError (or OSError) says what is wrong before anything starts."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise TeamFileError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    return parse(text, str(path))


def parse(text: str, source: str = "team.toml") -> TeamFile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        where = f"{found.group(1)}: " if found else ""
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e)) or "invalid TOML"
        raise TeamFileError(f"{source}:{where}invalid TOML: {reason}") from None
    check = _Checker(source, text)
    check.table(data, (), TOP_KEYS, "the file")
    if "team" not in data:
        raise check.fail((), "missing [team] table (with at least name = ...)")
    team = check.table(data["team"], ("team",), TEAM_KEYS, "[team]")
    if not str(team.get("name", "")).strip():
        raise check.fail(("team",), "[team] needs a name")
    lead = check.table(data.get("lead", {}), ("lead",), LEAD_KEYS, "[lead]")
    check.model(lead.get("model"), ("lead", "model"), "[lead]")
    roles = tuple(_role(check, r, i) for i, r in enumerate(_tables(check, data, "role")))
    tasks = tuple(_task(check, t, i) for i, t in enumerate(_tables(check, data, "task")))
    _check_roles(check, roles)
    _check_tasks(check, tasks, {r.name for r in roles})
    return TeamFile(
        name=team["name"].strip(), description=team.get("description"),
        isolation=check.choice(team.get("isolation"), ISOLATIONS, ("team", "isolation"), "[team] isolation"),
        instructions=lead.get("instructions", ""), lead_model=lead.get("model"), roles=roles, tasks=tasks,
    )  # fmt: skip


def _tables(check: _Checker, data: dict[str, Any], name: str) -> list[dict[str, Any]]:
    items = data.get(name, [])
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise check.fail((name,), f"each {name} must be a [[{name}]] table, not {_toml_type(item)}")
        check.table(item, (name, i), ROLE_KEYS if name == "role" else TASK_KEYS, f"[[{name}]] #{i + 1}")
    return list(items)


def _role(check: _Checker, raw: dict[str, Any], i: int) -> Role:
    at: KeyPath = ("role", i)
    name = str(raw.get("name", ""))
    if not NAME_PATTERN.match(name) or name.lower() in (LEAD_NAME, "main"):
        why = "needs a name" if not name else f"name {name!r} is not a teammate's name (letters, digits, - and _)"
        raise check.fail((*at, "name") if name else at, f"[[role]] #{i + 1} {why}")
    what = f"role {name!r}"
    if not raw.get("prompt") and not raw.get("agent_type"):
        raise check.fail(at, f"{what} needs a prompt or an agent_type")
    for key in ("max_budget_tokens", "max_budget_usd"):
        if key in raw and raw[key] <= 0:
            raise check.fail((*at, key), f"{what}: {key} must be above 0")
    check.model(raw.get("model"), (*at, "model"), what)
    return Role(
        name=name, prompt=raw.get("prompt", ""), agent_type=raw.get("agent_type"), model=raw.get("model"),
        mode=check.choice(raw.get("mode"), PERMISSION_MODES, (*at, "mode"), f"{what}: mode"),
        allowed_tools=tuple(raw.get("allowed_tools", ())), disallowed_tools=tuple(raw.get("disallowed_tools", ())),
        cwd=raw.get("cwd"), isolation=check.choice(raw.get("isolation"), ISOLATIONS, (*at, "isolation"),
                                                   f"{what}: isolation"),
        max_budget_tokens=raw.get("max_budget_tokens"),
        max_budget_usd=float(raw["max_budget_usd"]) if "max_budget_usd" in raw else None, node=raw.get("node"),
    )  # fmt: skip


def _task(check: _Checker, raw: dict[str, Any], i: int) -> SeedTask:
    at: KeyPath = ("task", i)
    if not str(raw.get("subject", "")).strip():
        raise check.fail(at, f"[[task]] #{i + 1} needs a subject")
    task_id = str(raw.get("id", i + 1)).strip().lstrip("#")
    if not task_id:
        raise check.fail((*at, "id"), f"[[task]] #{i + 1}: id must not be empty")
    return SeedTask(
        id=task_id, subject=raw["subject"], description=raw.get("description", ""), owner=raw.get("owner"),
        blocked_by=tuple(str(b).strip().lstrip("#") for b in raw.get("blocked_by", ())),
    )  # fmt: skip


def _check_roles(check: _Checker, roles: tuple[Role, ...]) -> None:
    seen: set[str] = set()
    for i, role in enumerate(roles):
        if role.name.lower() in seen:  # one inbox per name, whatever its case
            raise check.fail(("role", i, "name"), f"duplicate role name {role.name!r}")
        seen.add(role.name.lower())


def _check_tasks(check: _Checker, tasks: tuple[SeedTask, ...], roles: set[str]) -> None:
    index = {}
    for i, task in enumerate(tasks):
        if task.id in index:
            raise check.fail(("task", i, "id"), f"duplicate task id {task.id!r}")
        index[task.id] = i
    for i, task in enumerate(tasks):
        if task.owner is not None and task.owner not in roles and task.owner != LEAD_NAME:
            raise check.fail(("task", i, "owner"), f"task {task.id!r}: owner {task.owner!r} is no role of this file")
        for dep in task.blocked_by:
            if dep not in index:
                raise check.fail(("task", i, "blocked_by"), f"task {task.id!r} is blocked by unknown task {dep!r}")
    cycle = _cycle(tasks)
    if cycle:
        first = index[cycle[0]]
        chain = " -> ".join(repr(t) for t in cycle)
        raise check.fail(("task", first, "blocked_by"), f"tasks block each other in a cycle: {chain}")


def _cycle(tasks: tuple[SeedTask, ...]) -> list[str]:
    """A dependency cycle as its task ids (the first one repeated at the end), or []."""
    deps = {t.id: t.blocked_by for t in tasks}
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(task_id: str, path: list[str]) -> list[str]:
        state[task_id] = 1
        for dep in deps[task_id]:
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep] if dep in path else [task_id, dep]
            if dep not in state and (found := visit(dep, [*path, dep])):
                return found
        state[task_id] = 2
        return []

    for task_id in deps:
        if task_id not in state and (found := visit(task_id, [task_id])):
            return found
    return []
