"""The `result` a headless run ends with (`--output-format json`'s one line, stream-json's last), with the keys and
values Claude Code 2.1.332 gives it: usage in the API's shape, each model's usage and limits, the calls refused."""

from __future__ import annotations

import os
import uuid
from typing import Any

SUBTYPES = {"end_turn": "success", "exit_requested": "success", "max_turns": "error_max_turns",
            "interrupted": "error_during_execution", "max_tokens": "error_max_tokens",
            "max_budget_usd": "error_max_budget_usd"}  # fmt: skip
TERMINAL = {"end_turn": "completed", "exit_requested": "completed", "max_turns": "max_turns",
            "interrupted": "aborted", "max_tokens": "max_tokens", "max_budget_usd": "budget_exhausted"}  # fmt: skip
SUBAGENT_TOOLS = ("Agent", "Task")


def summary(done: list[Any], session: Any, session_id: str, seconds: float, denials_from: int = 0) -> dict[str, Any]:
    """The result line of a run whose turns ended as `done` (the last one says how it ended); the calls refused from
    the `denials_from`th on (a driven session's result lists its own turn's)."""
    result = done[-1]
    subtype = SUBTYPES.get(result.stop_reason, "error_during_execution")
    total = session.ledger.total()
    # Claude Code counts the turn that was to follow the results: the one the limit stopped, or --json-schema's end;
    # and each tool call of an answer past its first (2.1.332: one answer with two calls then one more: 3 turns)
    cut_short = 1 if result.stop_reason in ("max_turns", "structured_output", "structured_output_retries") else 0
    line: dict[str, Any] = {
        "type": "result", "subtype": subtype, "is_error": subtype != "success", "result": result.text,
        "session_id": session_id, "num_turns": sum(r.model_calls + r.beside for r in done) + cut_short,
        "duration_ms": int(seconds * 1000), "duration_api_ms": total.api_ms, "total_cost_usd": round(total.cost_usd, 6),
        "usage": usage_json(total.usage), "modelUsage": model_usage(session), "model": session.model,
        "stop_reason": api_stop_reason(result.stop_reason, session),
        "terminal_reason": TERMINAL.get(result.stop_reason, "error"),
        "api_error_status": None, "permission_denials": denials(session)[denials_from:], "fast_mode_state": "off",
        "fast_mode_disabled_reason": "sdk_opt_in_required", "subagent_stats": subagent_stats(session),
        "safety_stops": 0, "queued_turn_count": 0, "result_index": 0, "uuid": str(uuid.uuid4()),
    }  # fmt: skip
    if subtype != "success":  # as Claude Code: an error result has no `result`, its `errors` say why
        del line["result"]
    return line


def api_stop_reason(reason: str, session: Any) -> str | None:
    """The stop reason of the model's last answer, as Claude Code reports it: a run a limit cut off stopped on the
    answer that asked for tools (or ended); an interrupted one has none."""
    if reason in ("end_turn", "max_tokens", "stop_sequence", "refusal", "pause_turn", "tool_use"):
        return reason
    if reason == "interrupted":
        return None
    last: dict[str, Any] = next((m for m in reversed(session.agent.messages) if m.get("role") == "assistant"), {})
    content = last.get("content")
    asked = isinstance(content, list) and any(b.get("type") == "tool_use" for b in content if isinstance(b, dict))
    return "tool_use" if asked else "end_turn"


def denials(session: Any) -> list[dict[str, Any]]:
    """The calls refused so far (a rule, the mode, a person, a PreToolUse hook), as Claude Code lists them."""
    return list(getattr(session.agent, "denials", []))


def usage_json(usage: Any) -> dict[str, Any]:
    """Usage in the API's whole shape, as Claude Code's result carries it (what we do not measure is zero)."""
    return {
        **usage.to_json(), "output_tokens_details": {"thinking_tokens": 0},
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}, "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0}, "inference_geo": "",
        "iterations": [], "speed": "standard", "fallback_credit": None,
    }  # fmt: skip


def model_usage(session: Any) -> dict[str, dict[str, Any]]:
    """The result's `modelUsage`: each model's tokens, cost, window and output limit, in the SDK's names."""
    from agentteams.agent.compaction import context_window
    from agentteams.model.reasoning import capability

    provider = _provider()
    out = {}
    for model, spent in session.ledger.by_model().items():
        most = capability(model).max_tokens or session.agent.settings.max_tokens
        out[model] = {
            "inputTokens": spent.usage.input_tokens, "outputTokens": spent.usage.output_tokens,
            "cacheReadInputTokens": spent.usage.cache_read_input_tokens,
            "cacheCreationInputTokens": spent.usage.cache_creation_input_tokens, "webSearchRequests": 0,
            "costUSD": round(spent.cost_usd, 6), "contextWindow": context_window(model, {}), "maxOutputTokens": most,
            "thinkingTokens": 0, "cacheCreationEphemeral5mInputTokens": 0, "cacheCreationEphemeral1hInputTokens": 0,
            "canonicalModel": model, "provider": provider, "costBasis": "list",
        }  # fmt: skip
    return out


def _provider() -> str:
    """The provider the requests went to, in Claude Code's words."""
    from agentteams.model.providers import selected

    return str(selected(os.environ) or "firstParty")


def subagent_stats(session: Any) -> dict[str, Any]:
    """The subagents the lead started (its Agent/Task calls), counted as Claude Code's result counts them."""
    calls: dict[str, dict[str, Any]] = {}
    failed: set[str] = set()
    finished: set[str] = set()
    for message in session.agent.messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use" and block.get("name") in SUBAGENT_TOOLS:
                calls[block.get("id", "")] = block.get("input") or {}
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                finished.add(block["tool_use_id"])
                if block.get("is_error"):
                    failed.add(block["tool_use_id"])
    asked = [a.get("run_in_background") for a in calls.values()]
    background, foreground = asked.count(True), asked.count(False)
    # where the session runs them in the background (2.1.332's default), every call but a foreground one went there
    behind = session.ctx.hooks.start_subagent is not None
    launched = sum(1 for use, a in calls.items() if use not in failed and a.get("run_in_background") is not False)
    by_type: dict[str, int] = {}
    for args in calls.values():
        kind = str(args.get("subagent_type") or "general-purpose")
        by_type[kind] = by_type.get(kind, 0) + 1
    return {
        "spawned": len(calls), "requested": {"background": background, "foreground": foreground,
                                             "unset": len(calls) - background - foreground},
        "started_in_background": launched if behind else 0, "max_depth": 1 if calls else 0, "spawned_by_subagents": 0,
        "completed": len(finished - failed), "failed": len(failed), "killed": {"parent": 0, "user": 0, "system": 0},
        "refused": {"depth_limit": 0, "concurrency_limit": 0, "budget": 0}, "by_type": by_type,
    }  # fmt: skip


def budget_text(value: float | None) -> str:
    """A budget as Claude Code prints it: `1`, `0.5`."""
    return "" if value is None else (str(int(value)) if value == int(value) else repr(value))


def text_error(line: dict[str, Any], session: Any) -> str | None:
    """What Claude Code's text output says, on stdout, for a run a limit ended (None: another ending)."""
    if line["subtype"] == "error_max_budget_usd":
        return f"Error: Exceeded USD budget ({budget_text(session.options.max_budget_usd)})"
    if line["subtype"] == "error_max_turns":
        return f"Error: Reached max turns ({session.options.max_turns})"
    return None
