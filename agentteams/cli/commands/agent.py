"""`agentteams [PROMPT] [-p] ...`: the agent itself, as Claude Code's command line runs it."""

from typing import Annotated

import typer

from agentteams import __version__

EPILOG = (
    "Teams: agentteams launch team.toml | status | watch | attach TEAM AGENT | logs TEAM AGENT | cleanup | doctor | "
    "demo | config. "
    "Stores: agentteams team|task|msg ... (see agentteams team --help). "
    "agentteams mock-api --script FILE serves a scripted Messages API for offline runs."
)

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
RULES_HELP = "Tool rules, e.g. 'Bash(git:*) Edit' (repeatable)."
TEAMMATE = "Teammate (set by the lead when it spawns one)"
# Options Claude Code's lead may pass its teammates (2.1.330) that this version takes and does not act on yet
LATER = "Accepted, as Claude Code's lead passes it; not acted on yet."
CANNOT = "Claude Code's, for what agentteams has not (a cloud, an app, an IDE): says so in one line."


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentteams {__version__}")
        raise typer.Exit()


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
    system_prompt_file: Annotated[
        str | None, typer.Option("--system-prompt-file", help="--system-prompt, read from this file.")
    ] = None,
    append_system_prompt_file: Annotated[
        str | None, typer.Option("--append-system-prompt-file", help="--append-system-prompt, read from this file.")
    ] = None,
    thinking: Annotated[
        str | None, typer.Option("--thinking", help="enabled | adaptive | disabled, as the model's family takes it.")
    ] = None,
    max_thinking_tokens: Annotated[
        str | None, typer.Option("--max-thinking-tokens", help="The thinking budget, on models that take one.")
    ] = None,
    thinking_display: Annotated[
        str | None, typer.Option("--thinking-display", help="summarized | omitted | highlights.")
    ] = None,
    betas: Annotated[
        list[str] | None, typer.Option("--betas", help="A beta header to send (context-1m-2025-08-07); repeatable.")
    ] = None,
    task_budget: Annotated[
        str | None, typer.Option("--task-budget", help="An API-side task budget in tokens (output_config).")
    ] = None,
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
    resume_session_at: Annotated[
        str | None,
        typer.Option("--resume-session-at", help="With -r: go on from this entry (its uuid), the later left out."),
    ] = None,
    resume_drops_turn: Annotated[
        str | None,
        typer.Option("--resume-drops-turn", help="With --resume-session-at: the prompt uuid of the one turn it drops."),
    ] = None,
    session_mirror: Annotated[
        bool, typer.Option("--session-mirror", help="Also send each transcript entry on stdout (a session store).")
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
    plugin_dir: Annotated[
        list[str] | None, typer.Option("--plugin-dir", help="A plugin directory to load (its commands); repeatable.")
    ] = None,
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
    effort: Annotated[
        str | None, typer.Option("--effort", help="low | medium | high | xhigh | max, on models that take it.")
    ] = None,
    include_unsupported_models: Annotated[bool, typer.Option("--include-unsupported-models", help=LATER)] = False,
    chrome: Annotated[bool | None, typer.Option("--chrome/--no-chrome", help=CANNOT)] = None,
    permission_prompt_tool: Annotated[
        str | None,
        typer.Option("--permission-prompt-tool", help="stdio: permission questions go to the driving program."),
    ] = None,
    allow_skip_permissions: Annotated[
        bool,
        typer.Option(
            "--allow-dangerously-skip-permissions",
            help="Let the session be switched to bypassPermissions later (it starts in its own mode).",
        ),
    ] = False,
    agents: Annotated[
        str | None, typer.Option("--agents", help='Agent types as JSON: {"name": {"description", "prompt", ...}}.')
    ] = None,
    setting_sources: Annotated[
        str | None, typer.Option("--setting-sources", help="The settings files read: user,project,local (any of).")
    ] = None,
    tools: Annotated[
        str | None, typer.Option("--tools", help='The built-in tools offered: "" none, "default" all, or names.')
    ] = None,
    json_schema: Annotated[
        str | None,
        typer.Option("--json-schema", help="A JSON Schema the answer must fit: the result's structured_output."),
    ] = None,
    include_partial_messages: Annotated[
        bool, typer.Option("--include-partial-messages", help="With stream-json: each raw stream event as it comes.")
    ] = False,
    include_hook_events: Annotated[
        bool, typer.Option("--include-hook-events", help="With stream-json: each hook's start and response as lines.")
    ] = False,
    restricted: Annotated[
        bool,
        typer.Option(
            "--restricted", help="No Bash or WebFetch, no user/project/local settings files, file tools kept inside."
        ),
    ] = False,
    agent: Annotated[str | None, typer.Option("--agent", help="The agent type this session runs as.")] = None,
    autocompact: Annotated[
        str | None, typer.Option("--autocompact", help="The auto-compact window: auto, or at least 100k tokens.")
    ] = None,
    ax_screen_reader: Annotated[bool, typer.Option("--ax-screen-reader", help=CANNOT)] = False,
    background: Annotated[
        bool, typer.Option("--bg", "--background", help="Background sessions: not built yet (one line, exit 1).")
    ] = False,
    bare: Annotated[
        bool, typer.Option("--bare", help="Minimal: no hooks, CLAUDE.md, memory, plugins or skills of the files.")
    ] = False,
    brief: Annotated[bool, typer.Option("--brief", help="Offer the SendUserMessage tool.")] = False,
    cloud: Annotated[str | None, typer.Option("--cloud", help=CANNOT)] = None,
    debug: Annotated[
        str | None, typer.Option("--debug", "-d", help="Debug log, optionally of some categories (hooks,mcp or !api).")
    ] = None,
    debug_file: Annotated[str | None, typer.Option("--debug-file", help="Write the debug log to this file.")] = None,
    debug_to_stderr: Annotated[bool, typer.Option("--debug-to-stderr", hidden=True)] = False,
    desktop: Annotated[bool, typer.Option("--desktop", help=CANNOT)] = False,
    disable_slash_commands: Annotated[
        bool, typer.Option("--disable-slash-commands", help="No skills or custom commands.")
    ] = False,
    environment: Annotated[str | None, typer.Option("--environment", help=CANNOT)] = None,
    exclude_dynamic: Annotated[
        bool,
        typer.Option("--exclude-dynamic-system-prompt-sections", help="Per-machine sections in the first message."),
    ] = False,
    files: Annotated[list[str] | None, typer.Option("--file", help=CANNOT)] = None,
    forward_subagent_text: Annotated[
        bool, typer.Option("--forward-subagent-text", help="With stream-json: subagents' text and thinking too.")
    ] = False,
    from_pr: Annotated[str | None, typer.Option("--from-pr", help="Resume the session linked to a PR.")] = None,
    ide: Annotated[bool, typer.Option("--ide", help=CANNOT)] = False,
    name: Annotated[str | None, typer.Option("--name", "-n", help="A display name for this session.")] = None,
    no_session_persistence: Annotated[
        bool, typer.Option("--no-session-persistence", help="With -p: no transcript written (no resuming it).")
    ] = False,
    permission_prompts: Annotated[
        str | None, typer.Option("--permission-prompts", help="host | none: who answers permission questions with -p.")
    ] = None,
    prompt_suggestions: Annotated[
        str | None, typer.Option("--prompt-suggestions", help="With -p stream-json: suggested next prompts.")
    ] = None,
    remote_control: Annotated[str | None, typer.Option("--remote-control", help=CANNOT)] = None,
    remote_control_prefix: Annotated[
        str | None, typer.Option("--remote-control-session-name-prefix", help=CANNOT)
    ] = None,
    replay_user_messages: Annotated[
        bool, typer.Option("--replay-user-messages", help="With stream-json in and out: user messages echoed back.")
    ] = False,
    safe_mode: Annotated[
        bool, typer.Option("--safe-mode", help="No customizations: CLAUDE.md, hooks, MCP, commands, agents, ...")
    ] = False,
    system_prompt_snapshot: Annotated[
        str | None, typer.Option("--system-prompt-snapshot", help="on | off: the system prompt kept per session.")
    ] = None,
    teleport: Annotated[str | None, typer.Option("--teleport", help=CANNOT)] = None,
    tmux: Annotated[str | None, typer.Option("--tmux", help="With --worktree: a tmux session for it.")] = None,
    worktree: Annotated[
        str | None, typer.Option("--worktree", "-w", help="Run in a new git worktree (optionally named).")
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", "-v", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """A Claude-Code-compatible coding agent whose headline feature is agent teams."""
    given = dict(locals())  # the parameters by name: first, while nothing else is local
    from agentteams.run.agent import flags_from_options, start

    raise typer.Exit(start(flags_from_options(given)))
