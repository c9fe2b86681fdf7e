"""Prompt texts, in our own words: the coding-agent system prompt, team guidance, teammate identity.

Stable text first, per-session details last, so a request's cacheable prefix changes as little as possible.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentteams.settings.output_styles import OutputStyle

INTRO = "You are agentteams, a command-line coding agent working in the user's repository through tools."
# --bare (CLAUDE_CODE_SIMPLE): claude 2.1.332 sends only who it is, the working directory and the date
SIMPLE = "You are agentteams, a coding agent with the Bash, Read and Edit tools.\nWorking directory: {cwd}\n" \
    "Date: {date}"  # fmt: skip
# the first line while an output style is on: the style, not the default manner, says how to answer
STYLED_INTRO = (
    "You are agentteams, an agent working in the user's repository through tools, who answers in the manner the "
    "output style described below sets out."
)
CORE = (
    INTRO
    + """

How to work:
- Understand before changing: read the relevant files (Read, Grep, Glob) before you edit them.
- Make the smallest change that fully solves the task; keep the existing style of the code.
- Run the project's tests or the command that shows the change works (Bash) and report what happened.
- Prefer Edit for changes to existing files; Write replaces a whole file and needs a prior Read.
- If a tool call fails, read the error, fix the cause and try again; do not repeat the same failing call.
- Never print or store secrets such as API keys.
- Answer concisely. Say what you changed and how you checked it; flag anything you could not do."""
)

TEAM_LEAD = """\
You lead a team of agents. Coordination rules:
- Create a team (TeamCreate) before spawning teammates; spawn them with the Task tool, giving each a
  `name` and `team_name` and a self-contained prompt: they do not see this conversation.
- Split the work into tasks (TaskCreate), record dependencies (TaskUpdate addBlockedBy), and assign
  owners (TaskUpdate owner) or let idle teammates claim the lowest-id unblocked task.
- Refer to teammates by name, never by id. Your plain replies are seen only by the user: to reach a
  teammate, use SendMessage.
- Teammates going idle is normal: an idle notification means they finished their turn and wait for
  work. Messages from teammates arrive on their own between your turns; there is no inbox to poll.
- When the work is done, ask each teammate to shut down (SendMessage shutdown_request), wait for
  their approval, then delete the team (TeamDelete)."""

TEAMMATE = """\
You are a member of an agent team. Coordination rules:
- Your plain text output is not seen by anyone else. To tell the lead or a teammate something, use
  SendMessage with their name; keep messages short and concrete.
- The user mostly talks to the team lead. Work comes to you as messages and tasks.
- Check TaskList; take the lowest-id pending task that is unowned and not blocked by setting yourself
  as its owner (TaskUpdate owner), and mark it completed (TaskUpdate status) only when it is fully done.
- Read a task with TaskGet before you update it. Use TaskUpdate, not messages, to report task status.
- When you finish a turn you go idle; new messages wake you. Do not poll for messages.
- If you receive a shutdown_request, answer it with SendMessage type shutdown_response, echoing its
  request_id: approve when your work is done or can safely stop, otherwise reject with a reason."""

SUBAGENT_GUIDANCE = (
    "You are a subagent started for one job. Work on it with the tools you have, then answer with one "
    "complete final report: the caller sees only that report, not your intermediate steps."
)


@dataclass(frozen=True)
class Identity:
    """Who a teammate is, for its identity block."""

    name: str
    team: str
    lead: str = "team-lead"
    agent_type: str | None = None
    color: str | None = None


def teammate_identity(me: Identity) -> str:
    role = f" (role: {me.agent_type})" if me.agent_type else ""
    return (
        f"Your name is {me.name}{role}, in team {me.team!r}. The team lead is {me.lead}. "
        f"Messages you send are signed with your name."
    )


def system_prompt(
    *, cwd: str, model: str, date: str, team_role: str | None = None, identity: Identity | None = None,
    append: str | None = None, base: str | None = None, style: OutputStyle | None = None,
) -> str:  # fmt: skip
    """The whole system prompt; `team_role` is "lead", "teammate" or None (no team guidance). `base`, a custom
    agent type's own prompt, takes the place of ours (as Claude Code runs a custom subagent on its file's body).
    An output `style` changes our first line, and its section and closing line come last (styled)."""
    if base is None and os.environ.get("CLAUDE_CODE_SIMPLE"):  # --bare: no team, no style (none is chosen)
        return "\n\n".join(filter(None, [SIMPLE.format(cwd=cwd, date=date), append]))
    core = CORE.replace(INTRO, STYLED_INTRO, 1) if style is not None else CORE
    parts = [base or core]
    if team_role == "lead":
        parts.append(TEAM_LEAD)
    elif team_role == "teammate":
        parts.append(TEAMMATE)
    if identity is not None:
        parts.append(teammate_identity(identity))
    parts.append(f"Environment:\n- working directory: {cwd}\n- model: {model}\n- date: {date}")
    if append:
        parts.append(append)
    return styled("\n\n".join(parts), style)


def chosen_style(merged: dict[str, Any], cwd: Path, root: Path) -> OutputStyle | None:
    """The output style the settings' `outputStyle` names (settings/output_styles.py, loaded only when it is set)."""
    if not merged.get("outputStyle"):
        return None
    from agentteams.settings.output_styles import chosen

    return chosen(merged, cwd, root)


def style_section(style: OutputStyle) -> str:
    """A style's own section: its heading and its text as given, as Claude Code 2.1.332 heads it."""
    return f"# Output Style: {style.name}\n{style.prompt}"


def styled(prompt: str, style: OutputStyle | None) -> str:
    """`prompt` with `style` on: its section after everything else (the environment, an appended prompt), and its
    closing line last, where 2.1.332 puts them relative to its own environment and appended text."""
    if style is None:
        return prompt
    return "\n\n".join([prompt, style_section(style), style.closing_line()])


def style_switched(style: OutputStyle | None) -> str:
    """What the model is told when the style changes mid-conversation (the system prompt stays as it was, for the
    cache, as 2.1.332 keeps it): the new style in full, or that the default manner is back."""
    if style is None:
        return "The output style is back to the default: answer in your usual manner from here on."
    return f"{style_section(style)}\n\n{style.closing_line()}"


def claim_prompt(task_id: str, subject: str, description: str) -> str:
    """The turn a teammate starts when it claims a task by itself."""
    text = f"You claimed task #{task_id} from the team's task list: {subject}"
    if description:
        text += f"\n\n{description}"
    return text + "\n\nWork on it now, then mark it completed and look for the next open task."
