"""`agentteams [PROMPT] [-p] ...`: the agent itself, as Claude Code's command line runs it."""

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentteams import __version__, diagnostics
from agentteams.errors import AgentTeamsError

if TYPE_CHECKING:
    from agentteams.settings.types import Settings
    from agentteams.tools.mcp.config import McpFlags

EPILOG = (
    "Teams: agentteams launch team.toml | status | watch | attach TEAM AGENT | logs TEAM AGENT | cleanup | doctor | "
    "demo | config. "
    "Stores: agentteams team|task|msg ... (see agentteams team --help). "
    "agentteams mock-api --script FILE serves a scripted Messages API for offline runs."
)

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
RULES_HELP = "Tool rules, e.g. 'Bash(git:*) Edit' (repeatable)."
TEAMMATE = "Teammate (set by the lead when it spawns one)"
MODES = ("auto", "tmux", "in-process")
# Claude Code's "auto" mode approves routine work itself; ours has no classifier, so edits pass and anything
# riskier asks. "bubble" (2.1.330) sends a teammate's questions up to its lead: what our teammates always do.
PERMISSION_ALIASES = {"auto": "acceptEdits", "bubble": "default"}
# Options Claude Code's lead may pass its teammates (2.1.330) that this version takes and does not act on yet
LATER = "Accepted, as Claude Code's lead passes it; not acted on yet."


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentteams {__version__}")
        raise typer.Exit()


def mcp_flags(values: list[str] | None, strict: bool, cwd: Path) -> "McpFlags":
    """The MCP options, each --mcp-config value read now: a bad one is one line and an exit, before anything runs."""
    from agentteams.tools.mcp.config import McpFlags, parse_server, read_flag

    flags = McpFlags(tuple(values or ()), strict)
    for value in flags.configs:
        for name, entry in read_flag(value, cwd).items():
            parse_server(str(name), entry, "flag", os.environ)
    return flags


@app.command(epilog=EPILOG)
def run(
    prompt: Annotated[str | None, typer.Argument(help="The prompt (with -p, read from stdin when omitted).")] = None,
    print_mode: Annotated[bool, typer.Option("-p", "--print", help="Run the prompt, print the result, exit.")] = False,
    output_format: Annotated[str, typer.Option("--output-format", help="text | json | stream-json")] = "text",
    max_turns: Annotated[int | None, typer.Option("--max-turns", min=1, help="Most model calls.")] = None,
    max_budget_usd: Annotated[
        str | None, typer.Option("--max-budget-usd", help="With -p: the most dollars to spend on API calls.")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="sonnet, opus, haiku or a model id.")] = None,
    append_system_prompt: Annotated[str | None, typer.Option("--append-system-prompt")] = None,
    system_prompt: Annotated[str | None, typer.Option("--system-prompt", help="Replaces the system prompt.")] = None,
    add_dir: Annotated[list[str] | None, typer.Option("--add-dir", help="Another working directory.")] = None,
    fallback_model: Annotated[
        str | None, typer.Option("--fallback-model", help="With -p: the model asked when the model is overloaded.")
    ] = None,
    input_format: Annotated[
        str, typer.Option("--input-format", help="With -p: text | stream-json (user messages on stdin).")
    ] = "text",
    verbose: Annotated[bool, typer.Option("--verbose", help="Every message (needed by -p stream-json).")] = False,
    permission_mode: Annotated[
        str | None, typer.Option("--permission-mode", help="default | acceptEdits | ...")
    ] = None,
    skip_permissions: Annotated[bool, typer.Option("--dangerously-skip-permissions")] = False,
    allowed_tools: Annotated[
        list[str] | None, typer.Option("--allowedTools", "--allowed-tools", help=RULES_HELP)
    ] = None,
    disallowed_tools: Annotated[
        list[str] | None, typer.Option("--disallowedTools", "--disallowed-tools", help=RULES_HELP)
    ] = None,
    session_id: Annotated[str | None, typer.Option("--session-id", help="A UUID for this session.")] = None,
    cont: Annotated[
        bool, typer.Option("--continue", "-c", help="Go on with the newest conversation of this directory.")
    ] = False,
    resume: Annotated[
        str | None,
        typer.Option("--resume", "-r", help="Go on with a conversation: its session ID, or alone for a picker."),
    ] = None,
    fork_session: Annotated[
        bool, typer.Option("--fork-session", help="With -c/-r: go on in a copy under a new session ID.")
    ] = False,
    teammate_mode: Annotated[
        str | None,
        typer.Option("--teammate-mode", help="Where teammates run: auto (tmux inside tmux), tmux, in-process."),
    ] = None,
    teammate_isolation: Annotated[
        str | None,
        typer.Option("--teammate-isolation", help="worktree: each teammate in a git worktree of its own (or none)."),
    ] = None,
    teammate_command: Annotated[
        str | None, typer.Option("--teammate-command", help="Program started for each teammate (e.g. claude).")
    ] = None,
    agent_id: Annotated[str | None, typer.Option("--agent-id", help=f"{TEAMMATE}: name@team.")] = None,
    agent_name: Annotated[str | None, typer.Option("--agent-name", help=f"{TEAMMATE}: its name.")] = None,
    team_name: Annotated[str | None, typer.Option("--team-name", help=f"{TEAMMATE}: its team.")] = None,
    agent_color: Annotated[str | None, typer.Option("--agent-color", help=f"{TEAMMATE}: its colour.")] = None,
    parent_session_id: Annotated[str | None, typer.Option("--parent-session-id", help=f"{TEAMMATE}.")] = None,
    agent_type: Annotated[str | None, typer.Option("--agent-type", help=f"{TEAMMATE}: its role.")] = None,
    plan_mode_required: Annotated[bool, typer.Option("--plan-mode-required", help=f"{TEAMMATE}.")] = False,
    lead_verify_key: Annotated[
        str | None, typer.Option("--lead-verify-key", help=f"{TEAMMATE}: MS.KEY, the lead's Ed25519 public key.")
    ] = None,
    settings: Annotated[
        str | None, typer.Option("--settings", help="A settings file or JSON, over the user, project and local ones.")
    ] = None,
    plugin_dir: Annotated[list[str] | None, typer.Option("--plugin-dir", help=LATER)] = None,
    plugin_dir_no_mcp: Annotated[list[str] | None, typer.Option("--plugin-dir-no-mcp", help=LATER)] = None,
    plugin_url: Annotated[list[str] | None, typer.Option("--plugin-url", help=LATER)] = None,
    managed_settings: Annotated[str | None, typer.Option("--managed-settings", help=LATER)] = None,
    project_config_root: Annotated[str | None, typer.Option("--project-config-root", help=LATER)] = None,
    mcp_config: Annotated[
        list[str] | None, typer.Option("--mcp-config", help="MCP servers: a JSON file or string (repeatable).")
    ] = None,
    strict_mcp_config: Annotated[
        bool, typer.Option("--strict-mcp-config", help="Only the --mcp-config servers: no .mcp.json, settings or user.")
    ] = False,
    effort: Annotated[str | None, typer.Option("--effort", help=LATER)] = None,
    include_unsupported_models: Annotated[bool, typer.Option("--include-unsupported-models", help=LATER)] = False,
    chrome: Annotated[bool | None, typer.Option("--chrome/--no-chrome", help=LATER)] = None,
    restricted: Annotated[bool, typer.Option("--restricted", help=LATER)] = False,
    version: Annotated[
        bool, typer.Option("--version", "-v", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """A Claude-Code-compatible coding agent whose headline feature is agent teams."""
    from agentteams.agent.session import SessionOptions
    from agentteams.run import headless
    from agentteams.settings.load import load_settings

    headless.check_flags(headless.Flags(print_mode, output_format, input_format, verbose, session_id))
    budget = headless.max_budget(max_budget_usd)
    if teammate_mode is not None and teammate_mode not in MODES:
        raise AgentTeamsError(f"--teammate-mode must be one of {', '.join(MODES)}, got {teammate_mode!r}")
    cwd = Path.cwd()
    found = load_settings(cwd, flag=settings)
    for problem in found.problems:
        diagnostics.warning("%s", problem)
    if teammate_isolation is not None:  # the team-wide default, as the settings' teammateIsolation
        found = _with_isolation(found, teammate_isolation)
    os.environ.update(found.env)  # as Claude Code: the settings' env is the process's, so tools see it
    # command-line flags last: each wins over the settings, which win over our defaults
    teammate_mode = teammate_mode or found.teammate_mode or "auto"
    wanted = permission_mode or found.permissions.default_mode or "default"
    mode = "bypassPermissions" if skip_permissions else PERMISSION_ALIASES.get(wanted, wanted)
    chosen = model or os.environ.get("ANTHROPIC_MODEL", "").strip() or found.model or "default"  # Claude Code's order
    options = SessionOptions(
        cwd=cwd, model=chosen, permission_mode=mode, allowed_tools=allowed_tools or [],
        disallowed_tools=disallowed_tools or [], append_system_prompt=append_system_prompt, max_turns=max_turns,
        interactive=not print_mode, settings=found, system_prompt=system_prompt,
        add_dirs=[Path(d).expanduser().resolve() for d in add_dir or []], fallback_model=fallback_model,
        max_budget_usd=budget if print_mode else None,  # as Claude Code: it only works with --print
        mcp=mcp_flags(mcp_config, strict_mcp_config, cwd),
    )  # fmt: skip
    if session_id:
        options.session_id = session_id
    from agentteams.run import session_choice as resume_flags
    from agentteams.store.paths import Layout

    asked = resume_flags.ResumeFlags(cont, resume, fork_session, session_id)
    options.resume = resume_flags.resolve(asked, Layout.from_env(), cwd, interactive=not print_mode)
    options.fork_session = fork_session
    if options.resume is not None and options.resume.model and model is None:  # it goes on on its own model
        options.model = options.resume.model
    if agent_name or agent_id or team_name:
        from agentteams.run import teammate as teammate_run

        who = teammate_run.TeammateFlags(
            agent_id,
            agent_name,
            team_name,
            agent_color,
            parent_session_id,
            agent_type,
            plan_mode_required,
            lead_verify_key,
            model_given=model is not None,
        )
        raise typer.Exit(teammate_run.run(options, who, prompt))
    command = teammate_command or os.environ.get("CLAUDE_CODE_TEAMMATE_COMMAND") or None
    if not print_mode:
        from agentteams.run import interactive

        raise typer.Exit(interactive.run(prompt, options, teammate_mode=teammate_mode, teammate_command=command))
    options.interactive = False
    if input_format == "stream-json":
        from agentteams.run import stream_json as streamin

        raise typer.Exit(streamin.run(options, output_format, teammate_mode=teammate_mode, teammate_command=command))
    text = headless.prompt_text(prompt)
    raise typer.Exit(headless.run(text, options, output_format, teammate_mode=teammate_mode, teammate_command=command))


def _with_isolation(found: "Settings", isolation: str) -> "Settings":
    """The settings with `teammateIsolation` as the command line says (it wins over the files)."""
    import dataclasses

    if isolation not in ("worktree", "none"):
        raise AgentTeamsError(f"--teammate-isolation must be worktree or none, got {isolation!r}")
    return dataclasses.replace(found, merged={**found.merged, "teammateIsolation": isolation})
