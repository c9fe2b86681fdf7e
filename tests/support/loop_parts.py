"""Parts for driving the agent loop in memory: a permission policy that allows unless told otherwise and remembers
what was allowed always, an `Echo` tool, and the content blocks of one message of an agent's conversation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from agentteams.agent.loop import Agent
from agentteams.tools.base import Tool, ToolContext, ToolKind, ToolResult, require_str


@dataclass
class Verdict:
    behavior: str
    reason: str = ""


class Policy:
    def __init__(self, verdicts: dict[str, str] | None = None) -> None:
        self.verdicts = verdicts or {}
        self.remembered: list[tuple[str, str | None]] = []

    def decide(self, tool_name: str, kind: ToolKind, target: str | None) -> Verdict:
        if (tool_name, target) in self.remembered:
            return Verdict("allow")
        return Verdict(self.verdicts.get(tool_name, "allow"), f"{tool_name} needs approval")

    def remember(self, tool_name: str, target: str | None) -> None:
        self.remembered.append((tool_name, target))

    def accept_edits_from_now(self) -> None:
        self.verdicts = {name: "allow" if v == "ask" else v for name, v in self.verdicts.items()}

    def ruled(self, tool_name: str, kind: ToolKind, target: str | None) -> Verdict | None:
        return None


class Echo(Tool):
    name = "Echo"
    description = "Echo the text."
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"text": {"type": "string"}}}
    kind: ClassVar[ToolKind] = "read"

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(f"echo: {require_str(args, 'text')}")


def results_of(agent: Agent, index: int) -> list[dict[str, Any]]:
    content = agent.messages[index]["content"]
    assert isinstance(content, list)
    return content
