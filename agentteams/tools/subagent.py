"""The `Task` tool: a subagent (general-purpose, Explore, Plan or a `.claude/agents` type) in the background, its report
delivered later (`ctx.hooks.start_subagent`), or run to its answer (`run_subagent`; `run_in_background: false`)."""

from __future__ import annotations

import copy
import os
from typing import Any, ClassVar

from agentteams.model.types import ToolSpec
from agentteams.settings.agents import BUILT_IN_TOOLS, AgentCatalog
from agentteams.tools.base import Tool, ToolContext, ToolKind, ToolResult, require_str
from agentteams.tools.runtime_hooks import PERMISSION_MODES
from agentteams.tools.spawn_limits import FORK_TYPE, SpawnLimits

# which tools each built-in subagent type may use; None means every tool but Task itself
SUBAGENT_TOOLS = BUILT_IN_TOOLS


class TaskTool(Tool):
    name = "Task"
    description = (
        "Start a subagent that works on a self-contained job with its own context and returns one final "
        "report. Types: general-purpose (any tool), Explore (read-only search of the codebase), Plan "
        "(read-only research that ends in an implementation plan). Give a complete prompt: the subagent "
        "does not see this conversation. With name and team_name it starts a teammate instead."
    )
    fork_note = (
        "\nfork: a copy of you that starts from this conversation as it stands (your instructions, tools and model, "
        "so its first request reuses your prompt cache) and works on the prompt as its one directive; give it only "
        "what differs from what you already know. A fork cannot fork again."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A 3-5 word label for the job."},
            "prompt": {"type": "string", "description": "Everything the subagent needs to know."},
            "subagent_type": {"type": "string", "enum": list(SUBAGENT_TOOLS)},
            "model": {"type": "string", "description": "sonnet, opus, haiku or a model id."},
            "run_in_background": {
                "type": "boolean",
                "description": "In the background (the default, where this session can deliver a report later): "
                "you go on at once and the report comes as a notification when the subagent ends. false: wait for "
                "the report (only when your very next step needs it).",
            },
            "name": {"type": "string", "description": "A teammate's name (with team_name)."},
            "team_name": {"type": "string", "description": "The team the teammate joins."},
            "mode": {
                "type": "string",
                "enum": list(PERMISSION_MODES),
                "description": "A teammate's permission mode (default: yours); plan: it plans first, for approval.",
            },
            "cwd": {"type": "string", "description": "A teammate's working directory (another repository too)."},
            "allowed_tools": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'Permission rules a teammate may use without asking, e.g. ["Bash(npm test:*)"].',
            },
            "disallowed_tools": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'Permission rules a teammate is refused, e.g. ["Bash(rm:*)", "WebFetch"].',
            },
            "resume": {
                "type": "boolean",
                "description": "With name and team_name: bring back a teammate of that name that died, with its "
                "own conversation (the prompt, if any, reaches it as a message).",
            },
            "isolation": {
                "type": "string",
                "enum": ["worktree"],
                "description": "With name and team_name: the teammate works in a git worktree of its own, on a new "
                "branch from your HEAD (merge it back with TeamMerge).",
            },
            "node": {
                "type": "string",
                "description": "With name and team_name: the node (`agentteams node`) the teammate runs on; default: "
                'the least loaded registered node, else your machine ("local": your machine).',
            },
            "repo": {"type": "string", "description": "With node: a repository URL the node clones for the teammate."},
            "commit": {"type": "string", "description": "With repo: the commit checked out in that clone."},
            "max_budget_tokens": {
                "type": "integer",
                "minimum": 1,
                "description": "A teammate's budget in tokens: "
                "it is told to shut down once it has used them (at 80 % you are warned).",
            },
            "max_budget_usd": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "A teammate's budget in dollars, as max_budget_tokens.",
            },
        },
        "required": ["description", "prompt"],
    }
    kind: ClassVar[ToolKind] = "coordinate"

    def __init__(self, agents: AgentCatalog | None = None) -> None:
        self.agents = agents or AgentCatalog()  # the custom agent types this session may start
        self.fork = SpawnLimits.from_env(os.environ).fork  # whether `subagent_type: "fork"` is offered

    def runs_beside(self, args: dict[str, Any]) -> bool:
        """Subagents (forks too) run side by side, as claude's Agent calls of one answer do; a teammate's spawn runs
        alone (it only starts the teammate)."""
        return not (args.get("name") and args.get("team_name"))

    def spec(self) -> ToolSpec:
        """The schema with the custom agent types (and fork) in the enum, and each one's description for the model."""
        if not self.agents.agents and not self.fork:
            return super().spec()
        schema = copy.deepcopy(self.input_schema)
        schema["properties"]["subagent_type"]["enum"] = self.spec_types()
        custom = "".join(f"\n- {a.name}: {a.description}" for a in map(self.agents.agents.get, self.agents.names())
                         if a is not None)  # fmt: skip
        described = f"{self.description}\nCustom agent types of this project:{custom}" if custom else self.description
        return ToolSpec(self.name, described + (self.fork_note if self.fork else ""), schema)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        prompt = require_str(args, "prompt")
        kind = args.get("subagent_type") or "general-purpose"
        teammate = bool(args.get("name") and args.get("team_name"))
        if args.get("cwd") and not teammate:
            return ToolResult.error("cwd is for a teammate (with name and team_name); a subagent works in yours")
        if (args.get("node") or args.get("repo")) and not teammate:
            return ToolResult.error("node and repo are for a teammate (with name and team_name)")
        # a teammate in another directory: its type is checked against that directory's own types
        known = kind in SUBAGENT_TOOLS or self.agents.get(str(kind)) is not None or (kind == FORK_TYPE and self.fork)
        if not known and not (teammate and args.get("cwd")):
            return ToolResult.error(f"unknown subagent_type {kind!r}; use one of {', '.join(self.spec_types())}")
        if teammate:
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
        start = ctx.hooks.start_subagent  # only where a runtime delivers the report later (the session's main agent)
        if args.get("run_in_background") is not False and start is not None:  # 2.1.332's default: the background
            agent_id, output = start(str(kind), prompt, model)  # a refused spawn raises as the runner's does
            detail = {"isAsync": True, "status": "async_launched", "agentId": agent_id,
                      "description": str(args.get("description") or ""), "prompt": prompt,
                      "outputFile": output}  # fmt: skip
            return ToolResult(launched(agent_id, output), data=detail)
        answer, detail = runner(str(kind), prompt, model)  # a refused spawn raises ToolInputError with claude's words
        return ToolResult(answer or "(the subagent returned no text)", data=detail)

    def spec_types(self) -> list[str]:
        """The subagent types a call may name: the built-in ones, the custom ones, then fork when it is on."""
        return [*self.agents.names(), *([FORK_TYPE] if self.fork else [])]


def launched(agent_id: str, output_file: str) -> str:
    """What a background Task call answers at once (our words; claude's says the like)."""
    return (
        "The agent is now working in the background; you are notified when it finishes, with its report. Until "
        "then you know nothing of its results: do not guess them, and do not take up the same files or topic. Go "
        "on with other work or answer the user meanwhile.\n"
        f"agentId: {agent_id}\n"
        f"output_file: {output_file} (its transcript: do not read it, the notification carries the report)"
    )
