"""Plain-text and `--json` output for the store commands (script-friendly; no colour, no tables)."""

from __future__ import annotations

import json
from typing import Any

import typer

from agentteams.protocol import parse_message
from agentteams.records import Envelope, Task, TeamConfig


def emit_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def task_line(task: Task) -> str:
    """`#2 [pending] Write tests (alice) [blocked by #1]`, as Claude Code's TaskList prints it."""
    line = f"#{task.id} [{task.status}] {task.subject}"
    if task.owner:
        line += f" ({task.owner})"
    if task.blocked_by:
        line += " [blocked by " + ", ".join(f"#{b}" for b in task.blocked_by) + "]"
    return line


def task_detail(task: Task) -> str:
    """`Task #2: Write tests` / `Status: pending` / ..., as Claude Code's TaskGet prints it."""
    lines = [f"Task #{task.id}: {task.subject}", f"Status: {task.status}"]
    if task.description:
        lines.append(f"Description: {task.description}")
    if task.owner:
        lines.append(f"Owner: {task.owner}")
    if task.blocked_by:
        lines.append("Blocked by: " + ", ".join(f"#{b}" for b in task.blocked_by))
    if task.blocks:
        lines.append("Blocks: " + ", ".join(f"#{b}" for b in task.blocks))
    return "\n".join(lines)


def team_text(config: TeamConfig) -> str:
    lines = [f"team {config.name}" + (f" — {config.description}" if config.description else "")]
    for m in config.members:
        role = "lead" if m.agent_id == config.lead_agent_id else (m.agent_type or "teammate")
        state = {True: "active", False: "idle", None: "-"}[m.is_active]
        pane = m.tmux_pane_id or "-"
        lines.append(f"  {m.name:<16} {m.color or '-':<7} {role:<12} {m.backend_type or '-':<10} {pane:<8} {state}")
    return "\n".join(lines)


def envelope_text(env: Envelope) -> str:
    msg = parse_message(env.text)
    body = f"[{msg.TYPE or msg.to_json().get('type')}] {env.text}" if msg else env.text
    flag = "" if env.unread else " (read)"
    summary = f" — {env.summary}" if env.summary else ""
    head = f"{env.timestamp} {env.sender}{summary}{flag}"
    return head + "\n  " + body.replace("\n", "\n  ")
