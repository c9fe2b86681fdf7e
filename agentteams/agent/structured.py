"""`--json-schema` (structured output), as Claude Code does it: a StructuredOutput tool whose input is the schema, the
value it accepts ending the turn as the result's `structured_output`; a turn that ends in text is asked once to call
it, and a turn whose calls keep failing validation ends in `error_max_structured_output_retries`."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, ClassVar

from agentteams.errors import AgentTeamsError
from agentteams.model.types import ToolSpec
from agentteams.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from agentteams.agent.loop import Agent
    from agentteams.agent.session import Session
    from agentteams.agent.turn_types import StopReason

NAME = "StructuredOutput"
RETRIES_VAR = "MAX_STRUCTURED_OUTPUT_RETRIES"  # Claude Code's own: how many failed calls a turn may make
RETRIES = 5  # its default
DESCRIPTION = (
    "Give your final answer through this tool, its input shaped as the requested schema. Call it once, when your "
    "work is done; the turn ends with it."
)
NUDGE = "[structured output] This request needs its answer through the StructuredOutput tool: call it now."


def parse_schema(text: str | None) -> dict[str, Any] | None:
    """`--json-schema`'s value: a JSON object that is a valid JSON Schema, else one clear error (Claude Code's
    words)."""
    if text is None:
        return None
    try:
        schema = json.loads(text)
    except ValueError as e:
        raise AgentTeamsError(f"--json-schema is not valid JSON: {e}") from None
    from jsonschema import SchemaError, validators

    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError as e:
        raise AgentTeamsError(f"--json-schema is not a valid JSON Schema: {e.message}") from None
    if not isinstance(schema, dict):
        raise AgentTeamsError("--json-schema is not a valid JSON Schema: it must be an object")
    return schema


def attach(session: Session, schema: dict[str, Any] | None) -> Session:
    """The lead offered the StructuredOutput tool for `schema`, if one is given (listed with its tools; its subagents
    never get it)."""
    if schema is not None:
        session.structured = session.agent.structured = StructuredOutput(schema)
        tool = session.structured.tool()
        session.tools.append(tool)
        session.agent.tools[tool.name] = tool
    return session


def _retries() -> int:
    try:
        return max(1, int(os.environ.get(RETRIES_VAR, "")))
    except ValueError:
        return RETRIES


class TurnOutput:
    """One turn's StructuredOutput calls: the value accepted, the failures, whether the model was asked for it."""

    def __init__(self, retries: int) -> None:
        self.retries = retries
        self.value: Any = None
        self.accepted = False
        self.failures = 0
        self.last_error = ""
        self.nudged = False

    def ended(self) -> StopReason | None:
        """At a tool-result boundary: the turn ends once a value was accepted, or when too many calls failed."""
        if self.accepted:
            return "structured_output"
        return "structured_output_retries" if self.failures >= self.retries else None

    def nudge(self, agent: Agent) -> bool:
        """The turn would end in text without the value: ask for it, once (a synthetic user message)."""
        from agentteams.agent.turn_types import AgentEvent

        if self.accepted or self.nudged:
            return False
        self.nudged = True
        agent.messages.append({"role": "user", "content": [{"type": "text", "text": NUDGE}]})
        agent.emit(AgentEvent("user", message=agent.messages[-1], input={"synthetic": True}))
        return True


class StructuredOutput:
    """The session's schema and its tool; each turn's calls go to that turn's `TurnOutput`."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.turn = TurnOutput(_retries())

    def begin(self) -> TurnOutput:
        self.turn = TurnOutput(_retries())
        return self.turn

    def tool(self) -> Tool:
        return StructuredOutputTool(self)

    def check(self, value: dict[str, Any]) -> str | None:
        """Why `value` does not fit the schema (the most relevant error, where it is), or None."""
        from jsonschema import validators
        from jsonschema.exceptions import best_match

        found = best_match(validators.validator_for(self.schema)(self.schema).iter_errors(value))
        if found is None:
            return None
        where = "/" + "/".join(str(p) for p in found.absolute_path)
        return f"{where}: {found.message}"

    def fields(self, stop_reason: str) -> dict[str, Any]:
        """What the turn's result line says of it: the value (and its JSON as the result text), or the error."""
        turn = self.turn
        if stop_reason == "structured_output":
            return {"subtype": "success", "is_error": False, "terminal_reason": "completed",
                    "result": json.dumps(turn.value, ensure_ascii=False, separators=(",", ":")),
                    "structured_output": turn.value}  # fmt: skip
        if stop_reason == "structured_output_retries":  # Claude Code's words
            why = (f"Failed to provide valid structured output after {turn.failures} attempts — last "
                   f"{NAME} error: {turn.last_error}")  # fmt: skip
            return {"subtype": "error_max_structured_output_retries", "is_error": True, "errors": [why],
                    "terminal_reason": "structured_output_retry_exhausted"}  # fmt: skip
        return {}


class StructuredOutputTool(Tool):
    name: ClassVar[str] = NAME
    description: ClassVar[str] = DESCRIPTION
    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

    def __init__(self, owner: StructuredOutput) -> None:
        self.owner = owner

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.owner.schema)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        turn = self.owner.turn
        why = self.owner.check(args)
        if why is not None:
            turn.failures += 1
            turn.last_error = f"Output does not match required schema: {why}"
            return ToolResult.error(turn.last_error)
        turn.value, turn.accepted = args, True
        return ToolResult("The structured output was accepted.")
