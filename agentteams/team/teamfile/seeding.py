"""How a team file becomes a running team. Before its first turn the lead itself creates the team and the seed tasks
(dependencies, then owners) with the very tools its model would call, then spawns each role through the Task tool's
spawn path (`spawn_member`), so budgets, keys and names behave as for a spawn its model made."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentteams.errors import AgentTeamsError
from agentteams.tools.base import ToolInputError, ToolResult
from agentteams.tools.team.task_tools import TaskCreateTool, TaskUpdateTool
from agentteams.tools.team.team_tools import TeamCreateTool

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from agentteams.agent.session import Session
    from agentteams.store.records import TeamConfig
    from agentteams.team.teamfile.schema import Role, TeamFile

LAUNCH_KEY = "agentteamsLaunch"  # ours, in the team config: what its team file said that no member entry holds
# the first message of a role declared by its agent type alone (its type's own prompt says the rest)
TYPE_ONLY_PROMPT = "Look at the team's task list (TaskList) for the tasks assigned to you and work on them."


def spawn_args(role: Role, team: str, cwd: Path, default_isolation: str | None = None) -> dict[str, Any]:
    """The role as a Task tool call, by the Task tool's field names; a relative `cwd` is the lead's directory's."""
    args: dict[str, Any] = {
        "name": role.name, "team_name": team, "description": f"role {role.name}",
        "prompt": role.prompt or TYPE_ONLY_PROMPT,
    }  # fmt: skip
    isolation = role.isolation or default_isolation
    optional: dict[str, Any] = {
        "subagent_type": role.agent_type, "model": role.model, "mode": role.mode,
        "allowed_tools": list(role.allowed_tools) or None, "disallowed_tools": list(role.disallowed_tools) or None,
        "cwd": str((cwd / role.cwd).resolve()) if role.cwd else None,
        "isolation": isolation,  # "none" said too: a settings-wide "worktree" must not win over the file
        "max_budget_tokens": role.max_budget_tokens, "max_budget_usd": role.max_budget_usd, "node": role.node,
    }  # fmt: skip
    return {**args, **{k: v for k, v in optional.items() if v is not None}}


class TeamSeed:
    """A checked team file, applied to a lead in two steps: `create` before its runtime starts (so the team's thread
    starts with it), `spawn` right after; then `first_prompt` is what its model is given."""

    def __init__(self, spec: TeamFile) -> None:
        self.spec = spec
        self.team = ""  # the team's name once made (a taken name gets -2, as with TeamCreate)
        self.task_ids: dict[str, str] = {}  # the file's task id -> the task list's

    def create(self, session: Session) -> None:
        """The team, then its tasks, then their dependencies and owners (an owner set notifies it, as TaskUpdate's)."""
        spec, ctx = self.spec, session.ctx
        for role in spec.roles:  # custom types live in the project: known only now, still before anything is made
            if role.agent_type and role.agent_type not in session.agents.names():
                raise AgentTeamsError(f"role {role.name!r}: unknown agent_type {role.agent_type!r}")
        made = _done(TeamCreateTool().run({"team_name": spec.name, "description": spec.description}, ctx), "team")
        self.team = str((made.data or {}).get("team_name") or spec.name)
        session.store.teams.update(self.team, self._record)
        for task in spec.tasks:
            args = {"subject": task.subject, "description": task.description}
            created = _done(TaskCreateTool().run(args, ctx), f"task {task.id!r}")
            self.task_ids[task.id] = str((created.data or {})["id"])
        for task in spec.tasks:
            update: dict[str, Any] = {"taskId": self.task_ids[task.id]}
            if task.blocked_by:
                update["addBlockedBy"] = [self.task_ids[d] for d in task.blocked_by]
            if task.owner:
                update["owner"] = task.owner
            if len(update) > 1:
                _done(TaskUpdateTool().run(update, ctx), f"task {task.id!r}")

    def _record(self, config: TeamConfig) -> None:
        """What `team export` needs that no member entry holds."""
        config.extra[LAUNCH_KEY] = {"instructions": self.spec.instructions}

    def spawn(self, spawn_teammate: Callable[[dict[str, Any]], str], cwd: Path) -> None:
        """Every role, in the file's order, through the Task tool's spawn path (the lead's `spawn_teammate`)."""
        for role in self.spec.roles:
            try:
                spawn_teammate(spawn_args(role, self.team, cwd, self.spec.isolation))
            except ToolInputError as e:
                raise AgentTeamsError(f"could not start role {role.name!r}: {e}") from None

    def first_prompt(self, prompt: str | None) -> str:
        """What its model is given first: a word on what is already made, the lead's instructions, the prompt."""
        names = ", ".join(r.name for r in self.spec.roles) or "none yet"
        ids = ", ".join(f"#{i}" for i in self.task_ids.values()) or "none yet"
        made = (
            f'You lead team "{self.team}", made from a team file before this conversation: its teammates are '
            f"already running ({names}) and its task list holds tasks {ids}, with their owners and dependencies "
            "(TaskList shows them). Do not create the team or spawn these teammates again."
        )
        return "\n\n".join(p.strip() for p in (made, self.spec.instructions, prompt or "") if p.strip())


def _done(result: ToolResult, what: str) -> ToolResult:
    if result.is_error:
        raise AgentTeamsError(f"could not create {what}: {result.content}")
    return result
