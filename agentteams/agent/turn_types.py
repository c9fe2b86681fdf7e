"""What the agent loop and its callers exchange: its events, a turn's result, the permission protocol and the
question for the person, the loop's settings."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agentteams.model.types import Message, ModelResponse, Usage
from agentteams.tools.base import ToolKind, ToolResult

StopReason = Literal[
    "end_turn",
    "max_turns",
    "interrupted",
    "max_tokens",
    "exit_requested",
    "max_budget_usd",
    "structured_output",
    "structured_output_retries",
]  # the last two: --json-schema
# always: don't ask again for this (a command prefix, a path); accept_edits: yes, and acceptEdits from now on
Answer = Literal["allow", "deny", "always", "accept_edits"]
INTERRUPTED_MARK = "[Request interrupted by user]"  # Claude Code's marker after an answer the person cut off


class Decision(Protocol):
    @property
    def behavior(self) -> str: ...  # "allow" | "deny" | "ask"

    @property
    def reason(self) -> str: ...


@dataclass(frozen=True)
class AskedDecision:
    """A decision made outside the rules (a PreToolUse hook asks first)."""

    behavior: str
    reason: str


class Permissions(Protocol):
    def decide(self, tool_name: str, kind: ToolKind, target: str | None) -> Decision: ...
    def remember(self, tool_name: str, target: str | None) -> None: ...
    def accept_edits_from_now(self) -> None: ...  # "yes, and don't ask again for edits" in the default mode
    # what a PreToolUse hook's "allow" cannot lift: a deny or ask rule, or plan/delegate mode's limit
    def ruled(self, tool_name: str, kind: ToolKind, target: str | None) -> Decision | None: ...


@dataclass
class PermissionAsk:
    """A question for the person (or an SDK program's `can_use_tool`): may this tool call run?"""

    tool: str
    target: str | None
    input: dict[str, Any]
    reason: str
    tool_use_id: str = ""
    feedback: str = ""  # set by whoever answers "no": what to do instead, told to the model
    updated_input: dict[str, Any] | None = None  # set by whoever answers "yes" with other input: the call runs with it
    stop_turn: bool = False  # set with a "no" that also ends the turn (the SDK's deny with `interrupt`)


@dataclass
class AgentEvent:
    """What happened: kind is answering (a model call's answer began: its request has left) | text | tool_start |
    tool_end | retry | assistant | tool_results | turn_end, or compacted (`text` the trigger, `input` the token counts
    before and after)."""

    kind: str
    text: str = ""
    tool: str = ""
    tool_use_id: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    result: ToolResult | None = None
    message: Message | None = None
    usage: Usage | None = None
    response: ModelResponse | None = None  # an `assistant` event's answer: its id, model and stop reason
    # the uuids of the transcript entries the journal wrote for it (one per block): its stream-json lines carry them,
    # as Claude Code's do, so a program can name an entry (`--resume-session-at`)
    uuids: list[str] = field(default_factory=list)
    agent_id: str = ""  # a Task call's tool_start: the id of the subagent it starts (agent/subagent_run.py makes it)


@dataclass
class TurnResult:
    text: str
    stop_reason: StopReason
    model_calls: int
    usage: Usage
    beside: int = 0  # tool calls past the first of one answer: claude 2.1.332's num_turns counts each


class Interrupted(Exception):
    """Raised inside a streaming callback to end the current turn at once."""


@dataclass
class AgentSettings:
    model: str
    system: str
    max_turns: int | None = None  # model calls per user turn
    max_tokens: int = 8192
    name: str = "main"
    context: str | None = None  # memory files: a block before the first user message, where Claude Code puts it
    restriction: str | None = None  # why tools are missing (an agent type's list): said when one is called anyway
    stream_events: bool = False  # each raw stream event as an AgentEvent too (`--include-partial-messages`)


def tool_input_summary(args: dict[str, Any], limit: int = 80) -> str:
    """A one-line rendering of a tool call's input, for compact display."""
    for key in ("command", "file_path", "pattern", "subject", "taskId", "recipient", "to", "description"):
        if isinstance(args.get(key), str):
            text = str(args[key])
            break
    else:
        text = json.dumps(args, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
