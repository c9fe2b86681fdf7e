"""The task tools (TaskCreate, TaskGet, TaskUpdate, TaskList) over the shared task store, with Claude Code's
result texts; the list used is the team's, else the session's own. Also the coordination tools' common base.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

from agentteams.errors import AgentTeamsError
from agentteams.store.api import UNSET
from agentteams.store.records import TASK_STATUSES, Task, TaskStatus
from agentteams.store.task_text import task_detail, task_list_text
from agentteams.tools.base import Tool, ToolContext, ToolInputError, ToolKind, ToolResult, require_str
from agentteams.tools.runtime_hooks import TaskHookInfo


class CoordinationTool(Tool):
    """A tool over the shared stores: a store or input error becomes an error result for the model."""

    kind: ClassVar[ToolKind] = "coordinate"

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            return self.execute(args, ctx)
        except (AgentTeamsError, ToolInputError) as e:
            return ToolResult.error(str(e))

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError


def task_list_name(ctx: ToolContext) -> str:
    """Tasks belong to the team when there is one, else to this session alone."""
    return ctx.team_name or ctx.session_id


def task_id_arg(value: object, key: str = "taskId") -> str:
    """A task id as the model may write it: `2`, `"2"` or `"#2"`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip().lstrip("#").strip():
        return value.strip().lstrip("#").strip()
    raise ToolInputError(f'`{key}` must be a task id such as "2"')


def _id_list(args: dict[str, Any], key: str) -> list[str]:
    value = args.get(key)
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [task_id_arg(v, key) for v in items]


def optional_str(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ToolInputError(f"`{key}` must be a string")


def _metadata(args: dict[str, Any]) -> dict[str, Any] | None:
    value = args.get("metadata")
    if value is None or isinstance(value, dict):
        return value
    raise ToolInputError("`metadata` must be an object")


def _task_hook(ctx: ToolContext, which: str, task_id: str, subject: str, description: str) -> str | None:
    """The runtime's TaskCreated / TaskCompleted hooks: feedback refusing the change, or None."""
    hook = ctx.hooks.task_created if which == "created" else ctx.hooks.task_completed
    if hook is None:
        return None
    return hook(TaskHookInfo(task_id, subject, description, ctx.agent_name, ctx.team_name))


class TaskCreateTool(CoordinationTool):
    name = "TaskCreate"
    description = (
        "Add a task to the shared task list. Give a short imperative subject and a description with enough "
        "detail for whoever picks it up. New tasks start pending with no owner; set dependencies and owners "
        "afterwards with TaskUpdate."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "subject": {"type": "string", "description": "Short title in the imperative, e.g. 'Write parser'."},
            "description": {"type": "string", "description": "What needs doing and how to tell it is done."},
            "activeForm": {"type": "string", "description": "Present-continuous label shown while it runs."},
            "metadata": {"type": "object", "description": "Free-form extra data kept with the task."},
        },
        "required": ["subject", "description"],
    }

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        subject = require_str(args, "subject")
        task = ctx.store.tasks.create(
            task_list_name(ctx), subject, optional_str(args, "description") or "",
            active_form=optional_str(args, "activeForm"), metadata=_metadata(args),
        )  # fmt: skip
        refusal = _task_hook(ctx, "created", task.id, task.subject, task.description)
        if refusal is not None:  # as Claude Code: the task is made, the hooks see its id, a refusal removes it
            ctx.store.tasks.delete(task_list_name(ctx), task.id)
            return ToolResult.error(f"Task not created: a TaskCreated hook refused it: {refusal}")
        return ToolResult(f"Task #{task.id} created successfully: {task.subject}", data=task.to_json())


class TaskGetTool(CoordinationTool):
    name = "TaskGet"
    description = (
        "Show one task in full: subject, status, description, owner and dependencies. Read a task this way "
        "before you start on it or change it."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"taskId": {"type": "string", "description": 'The task\'s id, e.g. "2".'}},
        "required": ["taskId"],
    }

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task = ctx.store.tasks.get(task_list_name(ctx), task_id_arg(args.get("taskId")))
        return ToolResult(task_detail(task), data=task.to_json())


class TaskUpdateTool(CoordinationTool):
    name = "TaskUpdate"
    description = (
        "Change a task: status (pending, in_progress, completed, or deleted to remove it), owner (your own "
        "name to claim it; a teammate's name to assign it, which notifies them; empty to release it), "
        "subject, description, dependencies (addBlocks / addBlockedBy) or metadata. Only the fields you pass "
        "change. Mark a task completed only when the work is fully done and checked."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "taskId": {"type": "string", "description": "The task to change."},
            "subject": {"type": "string"},
            "description": {"type": "string"},
            "activeForm": {"type": "string"},
            "status": {"type": "string", "enum": list(TASK_STATUSES)},
            "addBlocks": {"type": "array", "items": {"type": "string"}, "description": "Tasks this one blocks."},
            "addBlockedBy": {"type": "array", "items": {"type": "string"}, "description": "Tasks blocking it."},
            "owner": {"type": "string", "description": "Agent name that owns the task; empty to clear."},
            "metadata": {"type": "object"},
        },
        "required": ["taskId"],
    }

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task_id = task_id_arg(args.get("taskId"))
        status = optional_str(args, "status")
        if status is not None and status not in TASK_STATUSES:
            raise ToolInputError(f"`status` must be one of {', '.join(TASK_STATUSES)}, got {status!r}")
        if status == "completed":
            current = ctx.store.tasks.get(task_list_name(ctx), task_id)
            if "owner" not in args:  # a stale owner's completion is refused before any hook hears of it
                ctx.store.tasks.check_lease(task_list_name(ctx), current, ctx.agent_name)
            refusal = None
            if current.status != "completed":
                refusal = _task_hook(ctx, "completed", current.id, current.subject, current.description)
            if refusal is not None:
                return ToolResult.error(
                    f"Task #{current.id} was not completed (it stays {current.status}): a TaskCompleted hook "
                    f"refused it: {refusal}"
                )
        result = ctx.store.tasks.update(
            task_list_name(ctx), task_id, subject=optional_str(args, "subject"),
            description=optional_str(args, "description"), active_form=optional_str(args, "activeForm"),
            status=cast("TaskStatus | None", status), owner=optional_str(args, "owner") if "owner" in args else UNSET,
            add_blocks=_id_list(args, "addBlocks"), add_blocked_by=_id_list(args, "addBlockedBy"),
            metadata=_metadata(args), assigned_by=ctx.agent_name,
        )  # fmt: skip
        data = {**result.task.to_json(), "updatedFields": result.updated}
        if not result.updated:
            return ToolResult(f"Task #{result.task.id} unchanged: it already had those values", data=data)
        return ToolResult(f"Updated task #{result.task.id} {', '.join(result.updated)}", data=data)


class TaskListTool(CoordinationTool):
    name = "TaskList"
    description = (
        "List every task: id, status, subject, owner and what blocks it. When choosing what to do next, take "
        "the lowest-id pending task that has no owner and nothing blocking it, and claim it with TaskUpdate. A list "
        "too long to show whole comes as counts by status and the open tasks."
    )
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.team_name:  # an agent that looks is one that notices: a lease run out sends its task back first
            listed, _ = ctx.store.tasks.list_swept(ctx.team_name)
        else:
            listed = ctx.store.tasks.list_tasks(task_list_name(ctx))
        tasks = [t for t in listed if not (t.metadata or {}).get("_internal")]
        if not tasks:
            return ToolResult("No tasks found", data={"tasks": []})
        return ToolResult(task_list_text(tasks), data={"tasks": _listed(tasks)})


def _listed(tasks: list[Task]) -> list[dict[str, Any]]:
    """The tool's structured result, with Claude Code's fields: a blocker already completed is left out."""
    done = {t.id for t in tasks if t.status == "completed"}
    return [
        {"id": t.id, "subject": t.subject, "status": t.status, **({"owner": t.owner} if t.owner else {}),
         "blockedBy": [b for b in t.blocked_by if b not in done]}
        for t in tasks
    ]  # fmt: skip


TASK_TOOLS: tuple[type[Tool], ...] = (TaskCreateTool, TaskGetTool, TaskUpdateTool, TaskListTool)
