"""What `--thinking`, `--max-thinking-tokens`, `--thinking-display`, `--effort`, `--task-budget` and `--betas` ask
of a request, shaped per model family as Claude Code 2.1.332 shapes it; `ReasoningClient` applies it to each of the
lead's requests. Nothing is sent unless a flag asks (our defaults send no thinking and no output_config)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.model.aliases import LONG_BETA
from agentteams.model.types import ModelClient, ModelRequest, ModelResponse, StreamCallbacks

THINKING_MODES = ("enabled", "adaptive", "disabled")
DISPLAYS = ("summarized", "omitted", "highlights")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
ALLOWED_BETAS = (LONG_BETA,)  # 2.1.332 refuses (with a warning) any other --betas value for an API key
EFFORT_BETA = "effort-2025-11-24"
TASK_BUDGET_BETA = "task-budgets-2026-03-13"
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"  # sent with budgeted thinking, as 2.1.332 does


@dataclass(frozen=True)
class Capability:
    """How a model thinks: `adaptive` (the model decides; a budget is ignored), `budget` (budget_tokens) or `none`;
    whether it takes output_config.effort; and the max_tokens 2.1.332 sends it, which a thinking budget must fit."""

    thinking: str
    effort: bool
    max_tokens: int


# Seen against the scripted server: 2.1.332 with each --model, --max-thinking-tokens 5000 and --effort high. Matched
# as a substring of the id (Bedrock and Vertex wrap it), most specific first; a model not here thinks not at all.
CAPABILITIES: tuple[tuple[str, Capability], ...] = (
    ("claude-opus-5", Capability("adaptive", True, 128_000)),
    ("claude-sonnet-5", Capability("adaptive", True, 128_000)),
    ("claude-haiku-5", Capability("adaptive", True, 128_000)),
    ("claude-opus-4-8", Capability("adaptive", True, 64_000)),
    ("claude-opus-4-6", Capability("adaptive", True, 64_000)),
    ("claude-sonnet-4-6", Capability("adaptive", True, 32_000)),
    ("claude-opus-4-5", Capability("budget", True, 32_000)),
    ("claude-sonnet-4", Capability("budget", False, 32_000)),  # 4 and 4.5
    ("claude-haiku-4-5", Capability("budget", False, 32_000)),
    ("claude-opus-4", Capability("budget", False, 32_000)),
)
NONE = Capability("none", False, 0)


def capability(model: str) -> Capability:
    low = model.lower()
    return next((c for prefix, c in CAPABILITIES if prefix in low), NONE)


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


def shape(request: ModelRequest, asked: Reasoning) -> ModelRequest:
    """`request` with what the flags ask of its model: thinking (and the max_tokens it needs), effort, task budget
    and their betas."""
    cap = capability(request.model)
    thinking: dict[str, Any] | None = None
    max_tokens, betas = request.max_tokens, list(request.betas)
    if cap.thinking == "adaptive" and (asked.thinking in ("enabled", "adaptive") or asked.display):
        thinking = {"type": "adaptive"}  # 2.1.332 ignores `disabled` and a budget on these models
        max_tokens = max(max_tokens, cap.max_tokens)
    elif cap.thinking == "budget" and (asked.thinking == "disabled" or asked.max_thinking_tokens == 0):
        thinking = {"type": "disabled"}
    elif cap.thinking == "budget" and (asked.thinking or asked.max_thinking_tokens or asked.display):
        max_tokens = max(max_tokens, cap.max_tokens)
        budget = min(asked.max_thinking_tokens or max_tokens, max_tokens - 1)  # the API wants it below max_tokens
        thinking = {"type": "enabled", "budget_tokens": budget}
        betas.append(INTERLEAVED_BETA)
    if thinking is not None and thinking["type"] != "disabled" and asked.display:
        thinking["display"] = asked.display
    output = dict(request.output_config or {})
    if asked.effort and cap.effort:
        output["effort"] = asked.effort
        betas.append(EFFORT_BETA)
    if asked.task_budget:
        output["task_budget"] = {"type": "tokens", "total": asked.task_budget}
        betas.append(TASK_BUDGET_BETA)
    betas += asked.betas
    return dataclasses.replace(
        request, thinking=thinking or request.thinking, max_tokens=max_tokens, output_config=output or None,
        betas=tuple(dict.fromkeys(betas)),
    )  # fmt: skip


class ReasoningClient:
    """`ModelClient` over `inner`: the requests of `agent` (the lead) shaped by the flags, a fallback model's by its
    own family; side calls, subagents and in-process teammates (their own `agent`) keep theirs."""

    def __init__(self, inner: ModelClient, asked: Reasoning, agent: str) -> None:
        self.inner = inner
        self.asked = asked
        self.agent = agent

    def complete(self, request: ModelRequest, callbacks: StreamCallbacks | None = None) -> ModelResponse:
        if request.agent == self.agent:
            request = shape(request, self.asked)
        return self.inner.complete(request, callbacks)
