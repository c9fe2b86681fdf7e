"""Headless runs (`-p`): build the session, run one prompt, print text, json or stream-json."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import typer

from agentteams.errors import AgentTeamsError

FORMATS = ("text", "json", "stream-json")
SUBTYPES = {"end_turn": "success", "exit_requested": "success", "max_turns": "error_max_turns",
            "interrupted": "error_interrupted", "max_tokens": "error_max_tokens"}  # fmt: skip


def read_stdin_prompt() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        raise AgentTeamsError("no prompt: give one after -p, or pipe it on stdin")
    text = sys.stdin.read().strip()
    if not text:
        raise AgentTeamsError("no prompt: stdin was empty")
    return text


def _line(obj: dict[str, Any]) -> None:
    typer.echo(json.dumps(obj, ensure_ascii=False))


def run(prompt: str, options: Any, output_format: str) -> int:
    """Run `prompt` once and print the outcome; returns the exit code."""
    from agentteams.agent import AgentEvent
    from agentteams.model.aliases import resolve_model
    from agentteams.model.anthropic_client import AnthropicClient
    from agentteams.model.config import ModelConfig
    from agentteams.session import Session

    resolve_model(options.model)  # an unknown alias fails before anything else
    config = ModelConfig.from_env()
    streaming = output_format == "stream-json"

    def on_event(event: AgentEvent) -> None:
        if streaming and event.kind in ("assistant", "tool_results") and event.message is not None:
            kind = "assistant" if event.kind == "assistant" else "user"
            _line({"type": kind, "message": event.message, "session_id": options.session_id})

    client = AnthropicClient(config)
    session = Session(options, client, on_event=on_event, secrets=tuple(config.secrets()))
    if streaming:
        _line({"type": "system", "subtype": "init", "session_id": options.session_id, "model": session.model,
               "cwd": str(options.cwd), "permissionMode": session.policy.mode,
               "tools": [t.name for t in session.tools]})  # fmt: skip
    start = time.monotonic()
    result = session.run(prompt)
    subtype = SUBTYPES.get(result.stop_reason, "error_during_execution")
    total = session.ledger.total()
    summary = {
        "type": "result", "subtype": subtype, "is_error": subtype != "success", "result": result.text,
        "session_id": options.session_id, "num_turns": result.model_calls,
        "duration_ms": int((time.monotonic() - start) * 1000), "total_cost_usd": round(total.cost_usd, 6),
        "usage": total.usage.to_json(), "model": session.model,
    }  # fmt: skip
    if output_format == "text":
        typer.echo(result.text)
        if subtype != "success":
            typer.echo(f"agentteams: error: the run ended early ({result.stop_reason})", err=True)
    else:
        _line(summary) if streaming else typer.echo(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0 if subtype == "success" else 1
