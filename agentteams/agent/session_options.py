"""What a session is started with: its options (the command line's and the settings' choices), what a custom
command's front matter gives the one turn it starts, and which model `opusplan` sends each call to."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentteams.model.aliases import resolve_model
from agentteams.model.reasoning import Reasoning
from agentteams.settings.types import Settings
from agentteams.tools.mcp.config import McpFlags  # not agent/mcp_servers: the REPL draws its prompt first

if TYPE_CHECKING:  # types only: every start composes options, and the interactive one draws its prompt next
    from agentteams.agent.loop import Agent
    from agentteams.agent.prompts import Identity
    from agentteams.settings.agents import AgentCatalog
    from agentteams.settings.commands import CustomCommand
    from agentteams.settings.plugins import Plugin
    from agentteams.store.transcripts.reader import Loaded


@dataclass
class SessionOptions:
    cwd: Path
    model: str = "default"  # Claude Code 2.1.330: opus with an API key (model/aliases.py)
    permission_mode: str = "default"
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    append_system_prompt: str | None = None
    system_prompt: str | None = None  # --system-prompt: the whole prompt, ours replaced (the append still follows)
    add_dirs: list[Path] = field(default_factory=list)  # --add-dir: as settings' additionalDirectories
    fallback_model: str | None = None  # --fallback-model: an alias or id, asked once when the model is overloaded
    max_turns: int | None = None
    max_budget_usd: float | None = None  # -p's --max-budget-usd: the session's spending (subagents' too)
    json_schema: dict[str, Any] | None = None  # --json-schema: the turn's answer through StructuredOutput
    interactive: bool = False
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    team_role: Literal["lead", "teammate"] | None = "lead"
    identity: Identity | None = None  # set for a teammate: its name, team, lead and colour
    plan_mode_required: bool = False  # a teammate that must have its plan approved before changing anything
    settings: Settings = field(default_factory=Settings)  # the merged settings files: rules, directories
    agents: AgentCatalog | None = None  # the custom agent types, when already read (else read from `cwd`)
    resume: Loaded | None = None  # -c / -r: the session this one goes on with (its file, id and conversation)
    fork_session: bool = False  # with `resume`: go on under a new id in a copy, the original left untouched
    mcp: McpFlags = field(default_factory=McpFlags)  # --mcp-config / --strict-mcp-config (passed on to teammates)
    restricted: bool = False  # --restricted: no tool that runs commands or fetches, file tools kept to the working dirs
    builtin_tools: tuple[str, ...] | None = None  # --tools: the built-in tools offered (None: all of them)
    plugins: tuple[Plugin, ...] = ()  # --plugin-dir: the plugins loaded (their commands are the session's)
    mirror: Callable[[Path, dict[str, Any]], None] | None = None  # --session-mirror: each transcript entry also here
    reasoning: Reasoning = field(default_factory=Reasoning)  # --thinking, --effort, --betas, ...: as asked
    hook_events: bool = False  # --include-hook-events: every hook's start and response as stream-json lines
    name: str | None = None  # -n/--name: the session's display name, recorded in its transcript


@dataclass(frozen=True)
class TurnExtras:
    """What a custom command's front matter gives the one turn it starts: a model, and tools allowed without asking
    (`origin` names the command file, for /permissions and the allow reason); and what goes before its text."""

    model: str | None = None
    allowed_tools: tuple[str, ...] = ()
    origin: str = ""
    # what the REPL put before the prompt's text: the files it mentions (@path), a !command's output for context
    attach: tuple[dict[str, Any], ...] = ()

    def content(self, prompt: str) -> str | list[dict[str, Any]]:
        """The turn's prompt as sent: its text after what is attached (an empty text, a !command's turn, left out)."""
        if not self.attach:
            return prompt
        return [*self.attach, *([{"type": "text", "text": prompt}] if prompt else [])]


def with_note(extras: TurnExtras | None, note: str) -> TurnExtras:
    """`extras` with `note` for the model first, as a reminder block before the prompt (and what else is attached)."""
    import dataclasses

    block = {"type": "text", "text": f"<system-reminder>\n{note}\n</system-reminder>"}
    base = extras or TurnExtras()
    return dataclasses.replace(base, attach=(block, *base.attach))


def command_extras(cmd: CustomCommand) -> TurnExtras | None:
    """What a custom command's turn gets; checked now, so a bad model or rule is an error before anything is sent."""
    from agentteams.agent.permissions.policy import parse_rules

    if not cmd.model and not cmd.allowed_tools:
        return None
    origin = f"allowed-tools of /{cmd.name} ({cmd.path})"
    parse_rules(cmd.allowed_tools, origin)
    return TurnExtras(resolve_model(cmd.model) if cmd.model else None, cmd.allowed_tools, origin)


def follow_plan_mode(
    agent: Agent, mode: Callable[[], str], models: Callable[[], tuple[str, str | None]], then: Callable[[], None]
) -> None:
    """`opusplan` as claude 2.1.332 runs it: before each of `agent`'s model calls, pick its model, then call `then`.
    `models()` gives (the model, the one plan mode takes instead, or None), read each time, so Shift-Tab, ExitPlanMode,
    set_permission_mode, /model and set_model all take effect at the next call; the system prompt stays as it was
    (2.1.332 sends the same one to both models)."""

    def pick() -> None:
        model, planning = models()
        agent.settings.model = planning if planning is not None and mode() == "plan" else model
        then()

    agent.before_call = pick
