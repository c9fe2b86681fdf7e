"""Headless runs (`-p`): build the session, run one prompt, print text, json or stream-json."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import typer

from agentteams.errors import AgentTeamsError

FORMATS = ("text", "json", "stream-json")
SETTLE_SECONDS = 1.0  # a team must stay settled this long before a -p run ends
POLL_SECONDS = 0.1  # how often a team's files are looked at meanwhile
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


def run(prompt: str, options: Any, output_format: str, *, teammate_mode: str = "auto",
        teammate_command: str | None = None) -> int:  # fmt: skip
    """Run `prompt` to the end (a team it starts is shut down first) and print the outcome; the exit code."""
    from agentteams.agent.loop import AgentEvent
    from agentteams.cli.lead_setup import build_lead
    from agentteams.model.aliases import resolve_model

    resolve_model(options.model)  # an unknown alias fails before anything else
    streaming = output_format == "stream-json"
    turns: list[Any] = []

    def on_event(event: AgentEvent) -> None:
        if streaming and event.kind in ("assistant", "tool_results") and event.message is not None:
            kind = "assistant" if event.kind == "assistant" else "user"
            _line({"type": kind, "message": event.message, "session_id": options.session_id})

    parts = build_lead(options, teammate_mode=teammate_mode, teammate_command=teammate_command,
                       on_event=on_event, on_turn_end=turns.append)  # fmt: skip
    runtime = parts.runtime
    session = runtime.session
    if streaming:
        _line({"type": "system", "subtype": "init", "session_id": options.session_id, "model": session.model,
               "cwd": str(options.cwd), "permissionMode": session.policy.mode,
               "tools": [t.name for t in session.tools]})  # fmt: skip
    start = time.monotonic()
    try:
        runtime.submit(*_custom_command(prompt, options.cwd))
        _wait_settled(runtime)
    finally:
        parts.close(team_down=True)
    done = [r for r in turns if r is not None]
    if not done:
        raise runtime.last_error or AgentTeamsError("the run ended before the model answered")
    return _report(done, session, options.session_id, output_format, time.monotonic() - start)


def _custom_command(prompt: str, cwd: Any) -> tuple[str, Any]:
    """(prompt, turn extras): a `/name args` prompt naming a custom command becomes its expanded body with its front
    matter, as Claude Code's -p does; anything else is sent as given (commands are read only for a leading /)."""
    if not prompt.lstrip().startswith("/"):
        return prompt, None
    from agentteams.agent.session import command_extras
    from agentteams.settings.commands import invocation, load_commands
    from agentteams.store.paths import config_root

    found = invocation(prompt, load_commands(cwd, config_root()))
    if found is None:
        return prompt, None
    command, args = found
    return command.prompt(args), command_extras(command)


def _wait_settled(runtime: Any) -> None:
    """Until nothing will happen without the user. With no team, that is as soon as the lead is idle. Teammates at
    work start further turns with their messages, and settled must hold for a moment, since a teammate that just
    went idle may be claiming its next task; their files are looked at every POLL_SECONDS, sleeping in between."""
    quiet_since: float | None = None
    while True:
        runtime.wait_idle()  # a real wait: it returns when no turn runs and nothing is queued
        if not runtime.team and not runtime.members():
            return
        now = time.monotonic()
        if not runtime.settled():
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= SETTLE_SECONDS:
            return
        runtime.wait_change(POLL_SECONDS)


def _report(done: list[Any], session: Any, session_id: str, output_format: str, seconds: float) -> int:
    """Print the last turn's outcome as text, json or a stream-json result line; the exit code."""
    result = done[-1]
    subtype = SUBTYPES.get(result.stop_reason, "error_during_execution")
    total = session.ledger.total()
    summary = {
        "type": "result", "subtype": subtype, "is_error": subtype != "success", "result": result.text,
        "session_id": session_id, "num_turns": sum(r.model_calls for r in done),
        "duration_ms": int(seconds * 1000), "total_cost_usd": round(total.cost_usd, 6),
        "usage": total.usage.to_json(), "model": session.model,
    }  # fmt: skip
    if output_format == "text":
        typer.echo(result.text)
        if subtype != "success":
            typer.echo(f"agentteams: error: the run ended early ({result.stop_reason})", err=True)
    elif output_format == "stream-json":
        _line(summary)
    else:
        typer.echo(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0 if subtype == "success" else 1
