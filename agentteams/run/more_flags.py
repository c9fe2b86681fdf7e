"""Claude Code 2.1.332's newer options of the agent command: read, checked as claude checks them (its refusals, each
one line and exit 1, before any model request), and applied to the environment and settings of the run; those for
what agentteams has not (a cloud, an app, an IDE, a browser) say so in one line."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError

if TYPE_CHECKING:
    from agentteams.settings.types import Settings, Source

TRUE_WORDS = ("true", "1", "yes", "on", "")  # --prompt-suggestions' values (alone: true), as claude takes them
FALSE_WORDS = ("false", "0", "no", "off")
LEAST_WINDOW = 100_000  # --autocompact's smallest window, as claude's
BACKGROUND = (
    "--bg cannot go with --print: a printed run has no interactive session to attach to later; give the task "
    "as the prompt and drop --print: agentteams --bg '<task>'"
)


class MoreFlags(NamedTuple):
    """The options as given (None, False or empty: not given). A named tuple, not a dataclass: it is made on every
    start, and a dataclass of this many fields costs ~3 ms of the cold start to define."""

    agent: str | None = None
    autocompact: str | None = None
    ax_screen_reader: bool = False
    background: bool = False
    bare: bool = False
    brief: bool = False
    chrome: bool | None = None
    cloud: str | None = None
    debug: str | None = None  # "" for all categories
    debug_file: str | None = None
    debug_to_stderr: bool = False
    desktop: bool = False
    disable_slash_commands: bool = False
    environment: str | None = None
    exclude_dynamic: bool = False
    files: tuple[str, ...] = ()
    forward_subagent_text: bool = False
    from_pr: str | None = None
    ide: bool = False
    name: str | None = None
    no_session_persistence: bool = False
    permission_prompts: str | None = None
    prompt_suggestions: str | None = None
    remote_control: str | None = None
    remote_control_prefix: str | None = None
    replay_user_messages: bool = False
    safe_mode: bool = False
    system_prompt_snapshot: str | None = None
    teleport: str | None = None
    tmux: str | None = None
    worktree: str | None = None


def from_options(given: Mapping[str, Any]) -> MoreFlags:
    """The options by their parameter names (typer's, or cli/root_argv.py's); a name missing is not given."""
    values = {k: v for k, v in given.items() if k in MoreFlags._fields and v is not None}
    values["files"] = tuple(given.get("files") or ())
    return MoreFlags(**values)


class Mode(NamedTuple):
    """How the run is asked to talk, for the checks that depend on it."""

    print_mode: bool
    output_format: str
    input_format: str


def check(more: MoreFlags, mode: Mode) -> None:
    """Claude's refusals: one line each, before anything runs or is sent."""
    if more.background:
        raise AgentTeamsError(BACKGROUND)
    for given, what in ((more.cloud, "--cloud"), (more.teleport, "--teleport"), (more.environment, "--environment")):
        if given is not None:
            raise AgentTeamsError(f"{what} works with claude.ai cloud sessions, which agentteams cannot reach: "
                                  f"drop {what} to run here")  # fmt: skip
    if more.desktop:
        raise AgentTeamsError("--desktop opens the Claude Desktop app, which agentteams has not: drop --desktop")
    if more.files:
        raise AgentTeamsError("--file downloads a cloud session's files, which agentteams cannot reach: drop --file")
    if more.tmux is not None and more.worktree is None:
        raise AgentTeamsError("--tmux requires --worktree")
    if more.system_prompt_snapshot not in (None, "on", "off"):
        raise AgentTeamsError(f"--system-prompt-snapshot must be on or off, got {more.system_prompt_snapshot!r}")
    if more.permission_prompts not in (None, "host", "none"):
        raise AgentTeamsError(f"--permission-prompts must be host or none, got {more.permission_prompts!r}")
    if suggestions(more) and not (mode.print_mode and mode.output_format == "stream-json"):
        raise AgentTeamsError("--prompt-suggestions requires --print and --output-format=stream-json")
    if more.replay_user_messages and not (mode.input_format == mode.output_format == "stream-json"):
        raise AgentTeamsError(
            "--replay-user-messages requires both --input-format=stream-json and --output-format=stream-json"
        )
    if more.no_session_persistence and not mode.print_mode and mode.input_format != "stream-json":
        raise AgentTeamsError("--no-session-persistence only works with --print")
    window(more.autocompact)


def suggestions(more: MoreFlags) -> bool:
    """--prompt-suggestions' value as a yes or no (claude's words for each)."""
    value = more.prompt_suggestions
    if value is None:
        return False
    if value.strip().lower() in TRUE_WORDS:
        return True
    if value.strip().lower() in FALSE_WORDS:
        return False
    raise AgentTeamsError(f"--prompt-suggestions must be true or false, got {value!r}")


def window(value: str | None) -> int | None:
    """--autocompact's window in tokens (None: auto, or not given): `200000`, `500k`, or `200` for 200k."""
    if value is None or value.strip().lower() == "auto":
        return None
    text = value.strip().lower()
    try:
        number = float(text[:-1]) * 1000 if text.endswith("k") else float(text)
    except ValueError:
        number = 0.0
    if 0 < number < 1000:  # a shorthand in thousands
        number *= 1000
    if not LEAST_WINDOW <= number < float("inf"):  # `nan` and `inf` too: claude refuses them, int() would raise
        raise AgentTeamsError(f"--autocompact must be auto, or at least 100k tokens (500k, 200000, or 200), "
                              f"got {value!r}")  # fmt: skip
    return int(number)


def notices(more: MoreFlags, mode: Mode) -> None:
    """One line for each option this machine cannot act on; the run goes on without it, as claude's would."""
    missing = []
    if more.chrome:
        missing.append("--chrome: Claude in Chrome is a browser extension agentteams cannot drive")
    if more.ide:
        missing.append("--ide: agentteams connects to no IDE")
    if more.remote_control is not None or more.remote_control_prefix is not None:
        missing.append("--remote-control: Remote Control needs a claude.ai session, which agentteams cannot reach")
    if more.ax_screen_reader and not mode.print_mode:
        missing.append("--ax-screen-reader: agentteams' terminal has no screen-reader layout yet")
    if more.tmux is not None:
        missing.append("--tmux: the worktree's session runs in this terminal")
    if suggestions(more):
        missing.append("--prompt-suggestions: agentteams suggests no next prompts")
    if more.from_pr is not None:
        missing.append("--from-pr: agentteams links no session to a pull request; a new session starts")
    if more.brief:
        missing.append("--brief: agentteams has no SendUserMessage tool; the answers come as text")
    if more.exclude_dynamic:
        missing.append("--exclude-dynamic-system-prompt-sections: the system prompt keeps its per-machine sections")
    if more.system_prompt_snapshot == "on":
        missing.append("--system-prompt-snapshot on: the system prompt is made once per process, not kept for resumes")
    for line in missing:
        diagnostics.warning("%s; going on without it", line)


def apply_env(more: MoreFlags) -> None:
    """What the options set for the whole run (and its teammates, tools and hooks), as claude sets them."""
    if more.bare:
        os.environ["CLAUDE_CODE_SIMPLE"] = "1"
    if more.safe_mode:
        os.environ["CLAUDE_CODE_SAFE_MODE"] = "1"
    if (tokens := window(more.autocompact)) is not None:
        os.environ["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = str(tokens)
    if more.disable_slash_commands:
        os.environ[NO_COMMANDS] = "1"


NO_COMMANDS = "AGENTTEAMS_DISABLE_SLASH_COMMANDS"  # --disable-slash-commands (settings/commands.py reads it)


def minimal() -> bool:
    """--bare or --safe-mode (or their variables, set by a parent): no CLAUDE.md, hooks or the files' extras."""
    return bool(os.environ.get("CLAUDE_CODE_SIMPLE") or os.environ.get("CLAUDE_CODE_SAFE_MODE"))


def settings_for(more: MoreFlags, found: Settings) -> Settings:
    """The settings as the options leave them: --bare and --safe-mode run no hooks but the managed file's (an
    organization's policy still applies, as claude's), and --safe-mode reads no commands or agent files of the user
    or the project."""
    if not (more.bare or more.safe_mode or minimal()):
        return found
    hooks, origins = managed_hooks(found)
    merged = {k: v for k, v in found.merged.items() if k != "hooks"} | ({"hooks": hooks} if hooks else {})
    sources = found.sources
    if more.safe_mode or os.environ.get("CLAUDE_CODE_SAFE_MODE"):
        sources = tuple(s for s in sources if s not in ("user", "project", "local"))
    return dataclasses.replace(found, hooks=hooks, merged=merged, sources=sources, origins=origins)


def managed_hooks(found: Settings) -> tuple[dict[str, Any], dict[str, Source]]:
    """The matcher groups the managed file set, by event, and the settings' origins with theirs at their new places
    (an origin is per group: `hooks.<event>[i]`)."""
    hooks: dict[str, Any] = {}
    origins = {k: v for k, v in found.origins.items() if not k.startswith("hooks.")}
    for event, groups in found.hooks.items():
        kept: list[Any] = []
        for i, group in enumerate(groups if isinstance(groups, list) else []):
            origin = found.origins.get(f"hooks.{event}[{i}]")
            if origin is not None and origin.scope == "managed":
                origins[f"hooks.{event}[{len(kept)}]"] = origin
                kept.append(group)
        if kept:
            hooks[event] = kept
    return hooks, origins
