"""An agent's request defaults and what `--thinking`, `--max-thinking-tokens`, `--thinking-display`, `--effort`,
`--task-budget`, `--betas` change, per model family as Claude Code 2.1.332 (max_tokens, thinking, effort, context
management, betas); `ReasoningClient` applies them to every agent's turns (lead, subagent, teammate), not side calls."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.model.aliases import LONG_BETA

if TYPE_CHECKING:  # annotations only: the REPL reads the options (Reasoning) before its prompt, the types load later
    from agentteams.model.types import ModelClient, ModelRequest, ModelResponse, StreamCallbacks

THINKING_MODES = ("enabled", "adaptive", "disabled")
DISPLAYS = ("summarized", "omitted", "highlights")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
ALLOWED_BETAS = (LONG_BETA,)  # 2.1.332 refuses (with a warning) any other --betas value for an API key
EFFORT_BETA = "effort-2025-11-24"
TASK_BUDGET_BETA = "task-budgets-2026-03-13"
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"  # sent to every model that thinks, as 2.1.332 does
UPDATES_BETA = "thinking-display-updates-2026-08-18"  # with the interactive session's `updates` display
CONTEXT_BETA = "context-management-2025-06-27"  # first-party, to every model that can think (even with it off)
# what 2.1.332 asks of the API's context management while thinking: earlier turns' thinking blocks all kept
KEEP_THINKING = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
# the display of a thinking block no flag chose: a person at the prompt gets progress updates, -p gets none
INTERACTIVE_DISPLAY, HEADLESS_DISPLAY = "updates", "omitted"

Effort = Literal["low", "medium", "high", "xhigh", "max"]


@dataclass(frozen=True)
class Capability:
    """How a model thinks: `adaptive` (the model decides; a budget is ignored), `budget` (budget_tokens) or `none`;
    the effort 2.1.332 asks of it unasked (None: it takes no output_config.effort); and the max_tokens it sends it,
    which a thinking budget must fit under."""

    thinking: Literal["adaptive", "budget", "none"]
    effort: Effort | None
    max_tokens: int


# Seen against the scripted server: 2.1.332 -p with each --model and no other flag (its request's max_tokens,
# thinking and output_config), and with --max-thinking-tokens 5000 and --effort. Matched as a substring of the id
# (Bedrock and Vertex wrap it), most specific first.
CAPABILITIES: tuple[tuple[str, Capability], ...] = (
    ("claude-opus-5-5", Capability("adaptive", "medium", 128_000)),
    ("claude-sonnet-5-5", Capability("adaptive", "medium", 128_000)),
    ("claude-haiku-5-5", Capability("adaptive", "medium", 128_000)),
    ("claude-fable-5", Capability("adaptive", "medium", 128_000)),
    ("claude-opus-5", Capability("adaptive", "high", 64_000)),
    ("claude-sonnet-5", Capability("adaptive", "high", 64_000)),
    ("claude-haiku-5", Capability("adaptive", "high", 32_000)),
    ("claude-opus-4-8", Capability("adaptive", "high", 64_000)),
    ("claude-opus-4-7", Capability("adaptive", "xhigh", 64_000)),
    ("claude-opus-4-6", Capability("adaptive", "high", 64_000)),
    ("claude-sonnet-4-6", Capability("adaptive", "high", 32_000)),
    ("claude-opus-4-5", Capability("budget", "high", 32_000)),
    ("claude-sonnet-4", Capability("budget", None, 32_000)),  # 4 and 4.5
    ("claude-haiku-4-5", Capability("budget", None, 32_000)),
    ("claude-opus-4", Capability("budget", None, 32_000)),
    ("claude-3-7-sonnet", Capability("none", None, 32_000)),
    ("claude-3-5-", Capability("none", None, 8_192)),  # haiku and sonnet
    ("claude-3-", Capability("none", None, 4_096)),  # 3 opus, sonnet and haiku
)
UNKNOWN = Capability("adaptive", "high", 32_000)  # 2.1.332 with an id it does not know (claude-custom-thing)


def capability(model: str) -> Capability:
    low = model.lower()
    return next((c for prefix, c in CAPABILITIES if prefix in low), UNKNOWN)


@dataclass(frozen=True)
class Reasoning:
    """The flags as given (None: not given)."""

    thinking: str | None = None
    max_thinking_tokens: int | None = None
    display: str | None = None
    effort: str | None = None
    task_budget: int | None = None
    betas: tuple[str, ...] = ()

    def asks(self) -> bool:
        return self != Reasoning()


def parse(
    thinking: str | None, max_thinking: str | None, display: str | None, effort: str | None, task_budget: str | None,
    betas: list[str],
) -> Reasoning:  # fmt: skip
    """The flags checked: a bad value is one line (2.1.332's words), an unknown effort or beta a warning and dropped."""
    if thinking is not None and thinking not in THINKING_MODES:
        raise AgentTeamsError(_bad("--thinking <mode>", thinking, f"Allowed choices are {', '.join(THINKING_MODES)}."))
    if display is not None and display not in DISPLAYS:
        raise AgentTeamsError(_bad("--thinking-display <display>", display,
                                   f"Allowed choices are {', '.join(DISPLAYS)}."))  # fmt: skip
    budget = None
    if max_thinking is not None:
        try:
            budget = int(max_thinking)
        except ValueError:
            raise AgentTeamsError(_bad("--max-thinking-tokens <tokens>", max_thinking, "must be a number")) from None
    total = None
    if task_budget is not None:
        total = int(task_budget) if task_budget.strip().isdigit() else 0
        if total <= 0:
            raise AgentTeamsError(_bad("--task-budget <tokens>", task_budget,
                                       "--task-budget must be a positive integer"))  # fmt: skip
    if effort is not None and effort.lower() not in EFFORTS:
        diagnostics.warning("Unknown --effort value '%s' — ignoring it and using the default effort. Valid values: "
                            "%s.", effort, ", ".join(EFFORTS))  # fmt: skip
        effort = None
    kept = []
    for beta in betas:
        if beta in ALLOWED_BETAS:
            kept.append(beta)
        else:
            diagnostics.warning("Beta header '%s' is not allowed. Only the following betas are supported: %s",
                                beta, ", ".join(ALLOWED_BETAS))  # fmt: skip
    return Reasoning(thinking, budget, display, effort.lower() if effort else None, total, tuple(kept))


def _bad(option: str, value: str, why: str) -> str:
    return f"option '{option}' argument '{value}' is invalid. {why}"


@dataclass(frozen=True)
class Defaults:
    """What no flag chose: the thinking display (interactive `updates`, -p `omitted`), the environment's
    CLAUDE_CODE_MAX_OUTPUT_TOKENS (max_tokens) and MAX_THINKING_TOKENS (a budget; 0 turns thinking off), and whether
    the API takes `context_management` (Anthropic's own: 2.1.332 sends none to Bedrock or Vertex)."""

    display: str = HEADLESS_DISPLAY
    max_output_tokens: int | None = None
    max_thinking_tokens: int | None = None
    context_management: bool = True

    @classmethod
    def read(cls, *, interactive: bool, first_party: bool = True, env: Mapping[str, str] | None = None) -> Defaults:
        environ = os.environ if env is None else env
        return cls(INTERACTIVE_DISPLAY if interactive else HEADLESS_DISPLAY,
                   _count(environ.get("CLAUDE_CODE_MAX_OUTPUT_TOKENS"), 1),
                   _count(environ.get("MAX_THINKING_TOKENS"), 0), first_party)  # fmt: skip


def _count(value: str | None, least: int) -> int | None:
    """A whole number from the environment, None when unset or not one (ignored, as 2.1.332 ignores it)."""
    text = (value or "").strip()
    return int(text) if text.isdigit() and int(text) >= least else None


def shape(request: ModelRequest, asked: Reasoning, defaults: Defaults | None = None) -> ModelRequest:
    """`request` as 2.1.332 sends its model: its max_tokens, thinking (adaptive, a budget under max_tokens, or off)
    and effort unless the flags say otherwise, a task budget, context management while it thinks, and their betas."""
    given = defaults or Defaults()
    cap = capability(request.model)
    thinking: dict[str, Any] | None = None
    max_tokens, betas = given.max_output_tokens or cap.max_tokens, list(request.betas)
    budget = asked.max_thinking_tokens if asked.max_thinking_tokens is not None else given.max_thinking_tokens
    if cap.thinking == "adaptive":  # 2.1.332 ignores `disabled` and a budget on these models
        thinking = {"type": "adaptive", "display": asked.display or given.display}
    elif cap.thinking == "budget" and (asked.thinking == "disabled" or budget == 0):
        thinking = {"type": "disabled"}
    elif cap.thinking == "budget":
        thinking = {
            "type": "enabled",
            "budget_tokens": min(budget or max_tokens, max_tokens - 1),
            "display": asked.display or given.display,
        }  # the API wants the budget below max_tokens
    managed = None
    if thinking is not None:
        betas.append(INTERLEAVED_BETA)
        if given.context_management:
            betas.append(CONTEXT_BETA)
            managed = KEEP_THINKING if thinking["type"] != "disabled" else None
        if thinking.get("display") == INTERACTIVE_DISPLAY:
            betas.append(UPDATES_BETA)
    output = dict(request.output_config or {})
    if cap.effort is not None:
        output["effort"] = asked.effort or cap.effort
        betas.append(EFFORT_BETA)
    if asked.task_budget:
        output["task_budget"] = {"type": "tokens", "total": asked.task_budget}
        betas.append(TASK_BUDGET_BETA)
    betas += asked.betas
    return dataclasses.replace(
        request, thinking=thinking or request.thinking, max_tokens=max_tokens, output_config=output or None,
        betas=tuple(dict.fromkeys(betas)), context_management=managed or request.context_management,
    )  # fmt: skip


class ReasoningClient:
    """`ModelClient` over `inner`: the turns of `agent` (the lead) and of the agents it runs (its subagents, in-process
    teammates: `request.turn`) shaped for their model and by the flags, as 2.1.332 shapes its subagents' as its own; a
    fallback model's by its own family; side calls (titles, WebFetch's, WebSearch's) keep theirs."""

    def __init__(self, inner: ModelClient, asked: Reasoning, agent: str, defaults: Defaults | None = None) -> None:
        self.inner = inner
        self.asked = asked
        self.agent = agent
        self.defaults = defaults or Defaults()

    def complete(self, request: ModelRequest, callbacks: StreamCallbacks | None = None) -> ModelResponse:
        if request.turn or request.agent == self.agent:
            request = shape(request, self.asked, self.defaults)
        return self.inner.complete(request, callbacks)
