"""`agentteams team export NAME`: a running team written back out as a team file that `agentteams launch` re-runs.
Roles come from the member entries, tasks from the task list (status left out: a re-run starts them afresh), the
lead's instructions from what its launch recorded. The one owner of tomli_w."""

from __future__ import annotations

import os
from typing import Any

import tomli_w

from agentteams.store.paths import LEAD_NAME
from agentteams.store.records import Member, Task, TeamConfig
from agentteams.team.teamfile.schema import parse
from agentteams.team.teamfile.seeding import LAUNCH_KEY, TYPE_ONLY_PROMPT


def export_team(config: TeamConfig, tasks: list[Task]) -> str:
    """The team file text; checked by the launch's own parser, so what is written can be launched."""
    lead = config.member(config.lead_agent_id)
    lead_cwd = lead.cwd if lead is not None else None
    teammates = [m for m in config.members if m.agent_id != config.lead_agent_id]
    roles = [_role(m, lead_cwd) for m in teammates]
    names = {m.name for m in teammates} | {LEAD_NAME}
    kept = [t for t in tasks if t.status != "deleted" and not (t.metadata or {}).get("_internal")]
    data: dict[str, Any] = {"team": _clean({"name": config.name, "description": config.description})}
    launch = config.extra.get(LAUNCH_KEY)
    instructions = launch.get("instructions") if isinstance(launch, dict) else None
    data["lead"] = _clean({"model": lead.model if lead else None, "instructions": instructions or None})
    if not data["lead"]:
        del data["lead"]
    if roles:
        data["role"] = roles
    if kept:
        data["task"] = [_task(t, {k.id for k in kept}, names) for t in kept]
    text = f"# agentteams team export {config.name}: re-run with `agentteams launch FILE [PROMPT]`\n"
    text += tomli_w.dumps(data, multiline_strings=True)
    parse(text, f"the export of team {config.name}")  # a file launch would refuse is a bug of ours, said at once
    return text


def _role(m: Member, lead_cwd: str | None) -> dict[str, Any]:
    isolated = bool(m.worktree_path)
    cwd = None
    if m.cwd and m.cwd != lead_cwd and not (isolated and m.cwd == m.worktree_path) and not m.node:  # a node's own
        cwd = os.path.relpath(m.cwd, lead_cwd) if lead_cwd else m.cwd  # relative to where the lead runs
    typed_only = bool(m.agent_type) and m.prompt == TYPE_ONLY_PROMPT
    return _clean({
        "name": m.name, "agent_type": m.agent_type, "prompt": None if typed_only else m.prompt, "model": m.model,
        "mode": "plan" if m.plan_mode_required else m.mode, "allowed_tools": m.allowed_tools or None,
        "disallowed_tools": m.disallowed_tools or None, "cwd": cwd, "isolation": "worktree" if isolated else None,
        "max_budget_tokens": m.budget_tokens or None, "max_budget_usd": float(m.budget_usd) if m.budget_usd else None,
        "node": m.node,
    })  # fmt: skip


def _task(t: Task, ids: set[str], names: set[str]) -> dict[str, Any]:
    owner = (t.owner or "").split("@", 1)[0] or None  # an agent id names its member too
    return _clean({
        "id": t.id, "subject": t.subject, "description": t.description or None,
        "owner": owner if owner in names else None,  # one who left is no role of the file
        "blocked_by": [b for b in t.blocked_by if b in ids] or None,
    })  # fmt: skip


def _clean(table: dict[str, Any]) -> dict[str, Any]:
    """Absent values left out: TOML has no null."""
    return {k: v for k, v in table.items() if v is not None and v != ""}
