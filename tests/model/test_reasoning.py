"""A lead's request defaults (max_tokens, thinking, effort) and the thinking, effort, task-budget and beta flags shaped
into a request per model family (model/reasoning.py), as Claude Code 2.1.332 shapes them
(tests/interop/test_interop_headless_flags.py compares with it), and their refusals."""

from __future__ import annotations

import pytest

from agentteams.errors import AgentTeamsError
from agentteams.model.anthropic_client import build_params
from agentteams.model.reasoning import Defaults, Reasoning, ReasoningClient, capability, parse, shape
from agentteams.model.types import ModelRequest, ModelResponse, StreamCallbacks, Usage

OPUS5, SONNET45, HAIKU45, OLD = "claude-opus-5-5", "claude-sonnet-4-5", "claude-haiku-4-5", "claude-3-5-haiku-20241022"


def params(model: str, asked: Reasoning) -> dict[str, object]:
    request = ModelRequest(model=model, system="s", tools=[], messages=[{"role": "user", "content": "hi"}])
    return build_params(shape(request, asked))


def betas(p: dict[str, object]) -> list[str]:
    headers = p.get("extra_headers") or {}
    assert isinstance(headers, dict)
    return str(headers.get("anthropic-beta", "")).split(",")


# 2.1.332 -p, nothing asked, per model (seen against the scripted server; the interop tier compares them live):
# max_tokens, the thinking sent, and the effort
UNASKED = [
    ("claude-opus-5-5", 128_000, {"type": "adaptive", "display": "omitted"}, "medium"),
    ("claude-fable-5-2", 128_000, {"type": "adaptive", "display": "omitted"}, "medium"),
    ("claude-opus-5", 64_000, {"type": "adaptive", "display": "omitted"}, "high"),
    ("claude-haiku-5", 32_000, {"type": "adaptive", "display": "omitted"}, "high"),
    ("claude-opus-4-7", 64_000, {"type": "adaptive", "display": "omitted"}, "xhigh"),
    ("claude-sonnet-4-6", 32_000, {"type": "adaptive", "display": "omitted"}, "high"),
    ("claude-opus-4-5-20251101", 32_000, {"type": "enabled", "budget_tokens": 31_999, "display": "omitted"}, "high"),
    ("claude-sonnet-4-5-20250929", 32_000, {"type": "enabled", "budget_tokens": 31_999, "display": "omitted"}, None),
    ("claude-3-7-sonnet-20250219", 32_000, None, None),
    ("claude-3-5-haiku-20241022", 8_192, None, None),
    ("claude-3-opus-20240229", 4_096, None, None),
    ("claude-custom-thing", 32_000, {"type": "adaptive", "display": "omitted"}, "high"),
]  # fmt: skip


@pytest.mark.parametrize(("model", "most", "thinking", "effort"), UNASKED)
def test_nothing_asked_sends_the_models_own_defaults(
    model: str, most: int, thinking: dict[str, object] | None, effort: str | None
) -> None:
    p = params(model, Reasoning())
    assert (p["max_tokens"], p.get("thinking"), p.get("output_config")) == (
        most,
        thinking,
        {"effort": effort} if effort else None,
    )
    assert ("interleaved-thinking-2025-05-14" in betas(p)) == (thinking is not None)
    assert ("effort-2025-11-24" in betas(p)) == (effort is not None)


def test_the_interactive_session_asks_for_thinking_updates_and_the_environment_limits() -> None:
    request = ModelRequest(model=SONNET45, system="s", tools=[], messages=[{"role": "user", "content": "hi"}])
    p = build_params(shape(request, Reasoning(), Defaults.read(interactive=True, env={})))
    assert p["thinking"] == {"type": "enabled", "budget_tokens": 31_999, "display": "updates"}
    assert "thinking-display-updates-2026-08-18" in betas(p)
    env = {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "5000", "MAX_THINKING_TOKENS": "0"}
    limited = build_params(shape(request, Reasoning(), Defaults.read(interactive=False, env=env)))
    assert limited["max_tokens"] == 5000 and limited["thinking"] == {"type": "disabled"}
    budgeted = Defaults.read(
        interactive=False, env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "5000", "MAX_THINKING_TOKENS": "x"}
    )
    assert build_params(shape(request, Reasoning(), budgeted))["thinking"]["budget_tokens"] == 4999


def test_an_adaptive_model_thinks_adaptively_and_ignores_a_budget_or_disabled() -> None:
    p = params(OPUS5, Reasoning(thinking="enabled", display="summarized"))
    assert p["thinking"] == {"type": "adaptive", "display": "summarized"} and p["max_tokens"] == 128_000
    assert params(OPUS5, Reasoning(thinking="disabled", max_thinking_tokens=5000))["thinking"]["type"] == "adaptive"  # type: ignore[index]


def test_a_budget_model_takes_the_budget_within_its_max_tokens() -> None:
    p = params(SONNET45, Reasoning(max_thinking_tokens=5000))
    assert (
        p["thinking"] == {"type": "enabled", "budget_tokens": 5000, "display": "omitted"} and p["max_tokens"] == 32_000
    )
    assert params(SONNET45, Reasoning(thinking="enabled"))["thinking"]["budget_tokens"] == 31_999  # type: ignore[index]
    assert params(SONNET45, Reasoning(max_thinking_tokens=40_000))["thinking"]["budget_tokens"] == 31_999  # type: ignore[index]
    assert params(HAIKU45, Reasoning(thinking="disabled"))["thinking"] == {"type": "disabled"}
    assert params(HAIKU45, Reasoning(max_thinking_tokens=0))["thinking"] == {"type": "disabled"}


def test_effort_only_where_the_model_takes_it() -> None:
    p = params(OPUS5, Reasoning(effort="high"))
    assert p["output_config"] == {"effort": "high"} and "effort-2025-11-24" in betas(p)
    assert "output_config" not in params(SONNET45, Reasoning(effort="high"))
    assert params("claude-opus-4-5-20251101", Reasoning(effort="low"))["output_config"] == {"effort": "low"}


def test_a_task_budget_and_an_allowed_beta_on_every_model() -> None:
    for model in (OPUS5, SONNET45, OLD):
        p = params(model, Reasoning(task_budget=20_000, betas=("context-1m-2025-08-07",)))
        assert p["output_config"]["task_budget"] == {"type": "tokens", "total": 20_000}  # type: ignore[index]
        assert {"task-budgets-2026-03-13", "context-1m-2025-08-07"} <= set(betas(p))
    assert "thinking" not in params(OLD, Reasoning(thinking="enabled"))  # a model that does not think


def test_the_family_is_found_inside_a_provider_id() -> None:
    assert capability("us.anthropic.claude-sonnet-4-5-20250929-v1:0").thinking == "budget"
    assert capability("claude-sonnet-4-6").thinking == "adaptive" and capability(OLD).thinking == "none"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("foo", None, None, None, None), "'--thinking <mode>' argument 'foo' is invalid. Allowed choices are"),
        ((None, "abc", None, None, None), "'--max-thinking-tokens <tokens>' argument 'abc' is invalid"),
        ((None, None, "loud", None, None), "'--thinking-display <display>' argument 'loud' is invalid"),
        ((None, None, None, None, "0"), "--task-budget must be a positive integer"),
    ],
)
def test_bad_values_are_refused_in_the_real_clis_words(
    args: tuple[str | None, str | None, str | None, str | None, str | None], said: str
) -> None:
    with pytest.raises(AgentTeamsError, match=said.replace("(", r"\(")):
        parse(*args, [])


def test_an_unknown_effort_or_beta_is_a_warning_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    asked = parse(None, None, None, "huge", None, ["foo-1", "context-1m-2025-08-07"])
    assert asked.effort is None and asked.betas == ("context-1m-2025-08-07",)
    err = caplog.text
    assert "Unknown --effort value 'huge'" in err and "Beta header 'foo-1' is not allowed" in err


class Recorder:
    def __init__(self) -> None:
        self.seen: list[ModelRequest] = []

    def complete(self, request: ModelRequest, callbacks: StreamCallbacks | None = None) -> ModelResponse:
        self.seen.append(request)
        return ModelResponse([], "end_turn", Usage(), request.model)


def test_the_client_shapes_the_agents_turns_and_leaves_side_calls_alone() -> None:
    inner = Recorder()
    client = ReasoningClient(inner, Reasoning(effort="max"), "team-lead")
    for agent, turn in (("team-lead", False), ("WebFetch", False), ("team-lead/Explore", True), ("alice", True)):
        client.complete(ModelRequest(model=OPUS5, system="", tools=[], messages=[], agent=agent, turn=turn))
    # 2.1.332's subagents and teammates send what its lead sends (the flags included), its side calls their own
    assert [r.output_config for r in inner.seen] == [{"effort": "max"}, None, {"effort": "max"}, {"effort": "max"}]
    assert [r.max_tokens for r in inner.seen] == [128_000, 8192, 128_000, 128_000]


# 2.1.332 on Anthropic's API: context management (every thinking block kept) while the model thinks, its beta to
# every model that can think; nothing of it to a model that cannot, nor to Bedrock or Vertex
KEEP_ALL = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
MANAGED = [
    (OPUS5, Reasoning(), True, KEEP_ALL, True),
    (SONNET45, Reasoning(), True, KEEP_ALL, True),
    (SONNET45, Reasoning(thinking="disabled"), True, None, True),
    (OLD, Reasoning(), True, None, False),
    (OPUS5, Reasoning(), False, None, False),
]


@pytest.mark.parametrize(("model", "asked", "first_party", "managed", "beta"), MANAGED)
def test_context_management_is_sent_where_the_real_cli_sends_it(
    model: str, asked: Reasoning, first_party: bool, managed: dict[str, object] | None, beta: bool
) -> None:
    request = ModelRequest(model=model, system="s", tools=[], messages=[{"role": "user", "content": "hi"}])
    p = build_params(shape(request, asked, Defaults.read(interactive=False, first_party=first_party, env={})))
    assert p.get("context_management") == managed
    assert ("context-management-2025-06-27" in betas(p)) == beta
