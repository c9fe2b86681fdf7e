"""Plain-text and `--json` output for the store commands (script-friendly; no colour, no tables)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from agentteams.inert_text import inert

if TYPE_CHECKING:
    from agentteams.store.records import Envelope, Task, TeamConfig


def emit_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def task_lines(tasks: list[Task]) -> list[str]:
    """`#2 [pending] Write tests (alice) [blocked by #1]` per task (the format: `store.task_text`)."""
    from agentteams.store.task_text import task_lines as lines

    return [inert(line) for line in lines(tasks)]  # subjects and owners are anyone's text: shown, never obeyed


def task_detail(task: Task) -> str:
    """`Task #2: Write tests` / `Status: pending` / ... (the format: `store.task_text`)."""
    from agentteams.store.task_text import task_detail as detail

    return inert(detail(task))


def team_text(config: TeamConfig) -> str:
    lines = [f"team {config.name}" + (f" — {config.description}" if config.description else "")]
    for m in config.members:
        role = "lead" if m.agent_id == config.lead_agent_id else (m.agent_type or "teammate")
        state = {True: "active", False: "idle", None: "-"}[m.is_active]
        pane = m.tmux_pane_id or "-"
        lines.append(f"  {m.name:<16} {m.color or '-':<7} {role:<12} {m.backend_type or '-':<10} {pane:<8} {state}")
    return inert("\n".join(lines))


def envelope_text(env: Envelope) -> str:
    from agentteams.store.protocol import parse_message

    msg = parse_message(env.text)
    body = f"[{msg.TYPE or msg.to_json().get('type')}] {env.text}" if msg else env.text
    flag = "" if env.unread else " (read)"
    summary = f" — {env.summary}" if env.summary else ""
    head = f"{env.timestamp} {env.sender}{summary}{flag}"
    return inert(head + "\n  " + body.replace("\n", "\n  "))
