"""The `Task` tool: run a synchronous subagent (general-purpose, Explore, Plan) and return its answer.

The runner comes from the runtime through `ctx.hooks.run_subagent`, so tools stay below the agent loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from agentteams.tools.base import Tool, ToolContext, ToolKind, ToolResult, require_str

SubagentRunner = Callable[[str, str, str | None], str]  # (subagent_type, prompt, model) -> final text

# which tools each subagent type may use; None means every tool but Task itself
SUBAGENT_TOOLS: dict[str, tuple[str, ...] | None] = {
    "general-purpose": None,
    "Explore": ("Read", "Glob", "Grep", "Bash"),
    "Plan": ("Read", "Glob", "Grep", "Bash", "TaskList", "TaskGet"),
}


class TaskTool(Tool):
    name = "Task"
    description = (
        "Start a subagent that works on a self-contained job with its own context and returns one final "
        "report. Types: general-purpose (any tool), Explore (read-only search of the codebase), Plan "
        "(read-only research that ends in an implementation plan). Give a complete prompt: the subagent "
        "does not see this conversation. With name and team_name it starts a teammate instead."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A 3-5 word label for the job."},
            "prompt": {"type": "string", "description": "Everything the subagent needs to know."},
            "subagent_type": {"type": "string", "enum": list(SUBAGENT_TOOLS)},
            "model": {"type": "string", "description": "sonnet, opus, haiku or a model id."},
            "name": {"type": "string", "description": "A teammate's name (with team_name)."},
            "team_name": {"type": "string", "description": "The team the teammate joins."},
        },
        "required": ["description", "prompt"],
    }
    kind: ClassVar[ToolKind] = "coordinate"

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        prompt = require_str(args, "prompt")
        kind = args.get("subagent_type") or "general-purpose"
        if kind not in SUBAGENT_TOOLS:
            return ToolResult.error(f"unknown subagent_type {kind!r}; use one of {', '.join(SUBAGENT_TOOLS)}")
        if args.get("name") and args.get("team_name"):
            spawn = ctx.hooks.spawn_teammate
            if ctx.team_name and not ctx.is_lead:
                return ToolResult.error("Teammates cannot start teammates: ask the team lead to spawn one.")
            if spawn is None:
                return ToolResult.error("spawning teammates is not available in this session (no team runtime)")
            return ToolResult(str(spawn(args)))
        runner = ctx.hooks.run_subagent
        if runner is None:
            return ToolResult.error("subagents are not available in this session")
        model = args.get("model") if isinstance(args.get("model"), str) else None
        answer = str(runner(str(kind), prompt, model))
        return ToolResult(answer or "(the subagent returned no text)", data={"subagent_type": kind})
