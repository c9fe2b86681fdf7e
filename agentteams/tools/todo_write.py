"""TodoWrite, as Claude Code's: the agent's whole todo list sent again at each change (tools/todos.py keeps it)."""

from __future__ import annotations

from typing import Any, ClassVar

from agentteams.tools.base import Tool, ToolContext, ToolResult
from agentteams.tools.todos import STATUSES, TOOL_NAME, parse_todos


class TodoWriteTool(Tool):
    name = TOOL_NAME
    description = (
        "Keep your todo list for this session: the user sees it as your plan. Send the whole list every time (it "
        "replaces the last one); each item has `content`, `status` (pending, in_progress or completed) and "
        "`activeForm` (the label shown while it is in progress). Keep one item in progress at a time."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The whole updated todo list",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "activeForm": {"type": "string", "minLength": 1},
                    },
                    "required": ["content", "status", "activeForm"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["todos"],
        "additionalProperties": False,
    }
    kind = "plan"  # it only records the agent's own plan: allowed in every mode, plan mode included

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        items = parse_todos(args.get("todos"))
        old = ctx.todos.replace(items)
        counts = {s: sum(t.status == s for t in items) for s in STATUSES}
        text = (
            f"The todo list is updated ({counts['in_progress']} in progress, {counts['pending']} pending, "
            f"{counts['completed']} completed). Keep it current as you work, and go on with the task in progress."
        )
        return ToolResult(text, data={"oldTodos": [t.to_json() for t in old], "newTodos": [t.to_json() for t in items]})
