"""`agentteams [PROMPT] [-p] ...` composed: the flags checked, the settings loaded (their `env` applied), each
value chosen by precedence (run/precedence.py), the session to go on with found, then the run this command line
asks for: a teammate, a session a program drives (stream-json input), the interactive lead, or `-p`."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.run import more_flags
from agentteams.run.more_flags import MoreFlags
from agentteams.run.precedence import Asked, Configured, choose

if TYPE_CHECKING:
    from agentteams.agent.session_options import SessionOptions
    from agentteams.settings.agents import AgentCatalog
    from agentteams.settings.plugins import Plugin
    from agentteams.settings.types import Settings
    from agentteams.tools.mcp.config import McpFlags


FILE_SOURCES = ("user", "project", "local")  # what --setting-sources may name
BARE_TOOLS = ("Bash", "Read", "Edit")  # --bare: the three tools claude 2.1.332 offers then


class AgentFlags(NamedTuple):
    """The agent command's options as given (None or empty: not given). A named tuple, not a dataclass: it is made on
    every start, and a frozen dataclass of this many fields costs milliseconds of the cold start to define. Its lists'
    defaults are never changed (flags_from_options gives each field a list of its own)."""

    prompt: str | None = None
    print_mode: bool = False
    output_format: str = "text"
    input_format: str = "text"
    verbose: bool = False
    max_turns: int | None = None
    max_budget_usd: str | None = None
    model: str | None = None
    append_system_prompt: str | None = None
    system_prompt: str | None = None
    add_dir: list[str] = []  # noqa: RUF012
    fallback_model: str | None = None
    permission_mode: str | None = None
    skip_permissions: bool = False
    allowed_tools: list[str] = []  # noqa: RUF012
    disallowed_tools: list[str] = []  # noqa: RUF012
    session_id: str | None = None
    cont: bool = False
    resume: str | None = None
    fork_session: bool = False
    resume_session_at: str | None = None  # `--resume-session-at`: the resumed conversation cut after this entry
    resume_drops_turn: str | None = None  # `--resume-drops-turn`: the cut must drop exactly this prompt's turn
    session_mirror: bool = False  # `--session-mirror`: transcript entries also as stdout lines (an SDK session store)
    teammate_mode: str | None = None
    teammate_isolation: str | None = None
    teammate_command: str | None = None
    settings: str | None = None
    mcp_config: list[str] = []  # noqa: RUF012
    strict_mcp_config: bool = False
    # a teammate's, set by the lead that spawns it
    agent_id: str | None = None
    agent_name: str | None = None
    team_name: str | None = None
    agent_color: str | None = None
    parent_session_id: str | None = None
    agent_type: str | None = None
    plan_mode_required: bool = False
    lead_verify_key: str | None = None
    restricted: bool = False
    permission_prompt_tool: str | None = None  # "stdio": questions go to the driving program (`can_use_tool`)
    partial_messages: bool = False  # `--include-partial-messages`
    allow_bypass: bool = False  # `--allow-dangerously-skip-permissions`: bypassPermissions may be switched to later
    agents_json: str | None = None  # `--agents`: agent types as JSON, beside the files'
    setting_sources: str | None = None  # `--setting-sources user,project,local`: the settings files read
    tools: str | None = None  # `--tools`: the built-in tools offered ("" none, "default" all, or names)
    json_schema: str | None = None  # `--json-schema`: the answer through StructuredOutput, fitting this schema
    plugin_dirs: list[str] = []  # noqa: RUF012  # `--plugin-dir`: plugins to load
    system_prompt_file: str | None = None  # `--system-prompt-file`: --system-prompt, read from a file
    append_system_prompt_file: str | None = None  # `--append-system-prompt-file`
    # what the model is asked to think and spend (model/reasoning.py)
    thinking: str | None = None
    max_thinking_tokens: str | None = None
    thinking_display: str | None = None
    effort: str | None = None
    betas: list[str] = []  # noqa: RUF012
    task_budget: str | None = None
    hook_events: bool = False  # `--include-hook-events`
    more: MoreFlags = MoreFlags()  # claude 2.1.332's newer options (run/more_flags.py)


def mcp_flags(values: list[str], strict: bool, cwd: Path) -> McpFlags:
    """The MCP options, each --mcp-config value read now: a bad one is one line and an exit, before anything runs."""
    from agentteams.tools.mcp.config import McpFlags, parse_server, read_flag

    flags = McpFlags(tuple(values), strict)
    for value in flags.configs:
        for name, entry in read_flag(value, cwd).items():
            parse_server(str(name), entry, "flag", os.environ)
    return flags


def load_settings_here(
    cwd: Path, flag: str | None = None, isolation: str | None = None, *, restricted: bool = False,
    sources: str | None = None,
) -> Settings:  # fmt: skip
    """The merged settings of `cwd` (each problem a warning), `--teammate-isolation` over the files' value, and their
    `env` made this process's, as Claude Code does: tools and teammates see it. `--restricted` reads no user,
    project or local file, `--setting-sources` only those it names (`--settings` and the managed file still apply)."""
    from agentteams.settings.load import load_settings
    from agentteams.settings.types import SCOPES

    scopes = ("flag", "managed") if restricted else SCOPES
    if sources is not None:
        named = [s.strip() for s in sources.split(",") if s.strip()]
        if unknown := [s for s in named if s not in FILE_SOURCES]:
            raise AgentTeamsError(f"--setting-sources: unknown source {unknown[0]!r} (user, project or local)")
        scopes = tuple(s for s in scopes if s in ("flag", "managed") or s in named)
    found = load_settings(cwd, flag=flag, scopes=scopes)
    for problem in found.problems:
        diagnostics.warning("%s", problem)
    if isolation is not None:  # the team-wide default, as the settings' teammateIsolation
        if isolation not in ("worktree", "none"):
            raise AgentTeamsError(f"--teammate-isolation must be worktree or none, got {isolation!r}")
        found = dataclasses.replace(found, merged={**found.merged, "teammateIsolation": isolation})
    os.environ.update(found.env)
    diagnostics.debug("Settings: read %s", ", ".join(found.sources))
    return found


def agents_with(text: str, cwd: Path, scopes: Collection[str] = FILE_SOURCES) -> AgentCatalog:
    """The agent types of `cwd`'s files and of `--agents` JSON (`{name: {description, prompt, ...}}`; its own win a
    name); JSON that is not an object is one clear error."""
    import json

    from agentteams.settings.agents import load_agents, program_agents
    from agentteams.store.paths import config_root

    try:
        defined = json.loads(text)
    except ValueError as e:
        raise AgentTeamsError(f"--agents must be a JSON object of agent types: {e}") from None
    if not isinstance(defined, dict):
        raise AgentTeamsError("--agents must be a JSON object of agent types ({name: {description, prompt}})")
    catalog = load_agents(cwd, config_root(), scopes)
    found, problems = program_agents(defined)
    for problem in problems:
        diagnostics.warning("%s", problem)
    catalog.agents.update({a.name: a for a in found})
    return catalog


def plugins_at(dirs: list[str]) -> tuple[Plugin, ...]:
    """`--plugin-dir`s, each read now: a directory that is not a plugin is one line and an exit."""
    if not dirs:  # the plugins' and commands' modules load only for a run that names a plugin
        return ()
    from agentteams.settings.plugins import load_plugin

    return tuple(load_plugin(Path(d)) for d in dirs)


def builtin_tools(value: str | None) -> tuple[str, ...] | None:
    """`--tools`: None for every built-in tool ("default", or not given), else the names offered ("": none)."""
    if value is None or value.strip() == "default":
        return None
    return tuple(t.strip() for t in value.replace(" ", ",").split(",") if t.strip())


def prompt_file(path: str | None, what: str) -> str | None:
    """A prompt file's text; a missing or unreadable one is one line (2.1.332's words) and an exit."""
    if path is None:
        return None
    file = Path(path).expanduser()
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AgentTeamsError(f"{what.capitalize()} file not found: {file.resolve()}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise AgentTeamsError(f"Error reading {what} file: {getattr(e, 'strerror', None) or e}") from None


def _joined(read: str | None, given: str | None) -> str | None:
    """A prompt file's text (as it is, its last newline kept), then the flag's on the next line, as 2.1.332 joins
    them when both are given."""
    return "\n".join(p for p in (read, given) if p is not None) if read is not None else given


def flags_from_options(given: Mapping[str, Any]) -> AgentFlags:
    """The agent command's parameters (by their names on the command line: typer's, or cli/root_argv.py's) as
    AgentFlags; an option not given is None or empty."""
    g = dict(given)
    lists = {name: list(g.get(name) or []) for name in ("add_dir", "allowed_tools", "disallowed_tools", "mcp_config",
                                                         "plugin_dir", "betas")}  # fmt: skip
    return AgentFlags(
        prompt=g["prompt"], print_mode=g["print_mode"], output_format=g["output_format"],
        input_format=g["input_format"], verbose=g["verbose"], max_turns=g["max_turns"],
        max_budget_usd=g["max_budget_usd"], model=g["model"], append_system_prompt=g["append_system_prompt"],
        system_prompt=g["system_prompt"], add_dir=lists["add_dir"], fallback_model=g["fallback_model"],
        permission_mode=g["permission_mode"], skip_permissions=g["skip_permissions"],
        allowed_tools=lists["allowed_tools"], disallowed_tools=lists["disallowed_tools"], session_id=g["session_id"],
        cont=g["cont"], resume=g["resume"], fork_session=g["fork_session"], resume_session_at=g["resume_session_at"],
        resume_drops_turn=g["resume_drops_turn"], session_mirror=g["session_mirror"],
        teammate_mode=g["teammate_mode"], teammate_isolation=g["teammate_isolation"],
        teammate_command=g["teammate_command"], settings=g["settings"], mcp_config=lists["mcp_config"],
        strict_mcp_config=g["strict_mcp_config"], agent_id=g["agent_id"], agent_name=g["agent_name"],
        team_name=g["team_name"], agent_color=g["agent_color"], parent_session_id=g["parent_session_id"],
        agent_type=g["agent_type"], plan_mode_required=g["plan_mode_required"], lead_verify_key=g["lead_verify_key"],
        restricted=g["restricted"], permission_prompt_tool=g["permission_prompt_tool"],
        partial_messages=g["include_partial_messages"], allow_bypass=g["allow_skip_permissions"],
        agents_json=g["agents"], setting_sources=g["setting_sources"], tools=g["tools"], json_schema=g["json_schema"],
        plugin_dirs=lists["plugin_dir"], system_prompt_file=g["system_prompt_file"],
        append_system_prompt_file=g["append_system_prompt_file"], thinking=g["thinking"],
        max_thinking_tokens=g["max_thinking_tokens"], thinking_display=g["thinking_display"], effort=g["effort"],
        betas=lists["betas"], task_budget=g["task_budget"], hook_events=g["include_hook_events"],
        more=more_flags.from_options(g),
    )  # fmt: skip


def configured(found: Settings) -> Configured:
    return Configured(found.model, found.permissions.default_mode, found.teammate_mode)


def start(flags: AgentFlags) -> int:
    """Run what the command line asks for; its exit code."""
    from agentteams.agent.session_options import SessionOptions
    from agentteams.model.reasoning import parse as parse_reasoning
    from agentteams.run import headless, session_choice
    from agentteams.store.paths import Layout

    headless.check_flags(
        headless.Flags(flags.print_mode, flags.output_format, flags.input_format, flags.verbose, flags.session_id)
    )
    mode = more_flags.Mode(flags.print_mode, flags.output_format, flags.input_format)
    if flags.more.background and not flags.print_mode and flags.input_format != "stream-json":
        from agentteams.run.background import start_background

        return start_background(flags.prompt, flags.more.name)  # a session of its own, in its own tmux server
    more_flags.check(flags.more, mode)  # claude's refusals, before anything is read, written or sent
    more_flags.notices(flags.more, mode)
    more_flags.apply_env(flags.more)
    budget = headless.max_budget(flags.max_budget_usd)
    system = _joined(prompt_file(flags.system_prompt_file, "system prompt"), flags.system_prompt)
    appended = _joined(prompt_file(flags.append_system_prompt_file, "append system prompt"), flags.append_system_prompt)
    reasoning = parse_reasoning(flags.thinking, flags.max_thinking_tokens, flags.thinking_display, flags.effort,
                                flags.task_budget, flags.betas)  # fmt: skip
    schema = None
    if flags.json_schema is not None:  # its module brings the tools' base: not for every start
        from agentteams.agent.structured import parse_schema

        schema = parse_schema(flags.json_schema)
    if flags.more.worktree is not None:
        from agentteams.run.more_session import enter_worktree

        enter_worktree(flags.more.worktree, Path.cwd())
    cwd = Path.cwd()
    if not flags.print_mode and flags.input_format != "stream-json" and not (flags.agent_name or flags.agent_id):
        from agentteams.run.trust_question import ensure_trusted

        ensure_trusted(cwd)  # a person's session: nothing of an untrusted folder applies before they say so
    found = load_settings_here(cwd, flags.settings, flags.teammate_isolation, restricted=flags.restricted,
                               sources=flags.setting_sources)  # fmt: skip
    found = more_flags.settings_for(flags.more, found)
    asked = Asked(
        flags.model, flags.permission_mode, flags.skip_permissions, flags.teammate_mode, flags.teammate_command
    )
    chosen = choose(asked, configured(found), os.environ)
    if flags.restricted and chosen.permission_mode == "bypassPermissions":
        raise AgentTeamsError("bypassPermissions is not supported in restricted mode (--restricted)")
    options = SessionOptions(
        cwd=cwd, model=chosen.model, permission_mode=chosen.permission_mode, allowed_tools=flags.allowed_tools,
        disallowed_tools=flags.disallowed_tools, append_system_prompt=appended, max_turns=flags.max_turns,
        interactive=not flags.print_mode, settings=found, system_prompt=system, reasoning=reasoning,
        hook_events=flags.hook_events,
        add_dirs=[Path(d).expanduser().resolve() for d in flags.add_dir], fallback_model=flags.fallback_model,
        # as Claude Code: it only works with --print, or with a program driving (the Agent SDKs pass no -p)
        max_budget_usd=budget if flags.print_mode or flags.input_format == "stream-json" else None,
        mcp=mcp_flags(flags.mcp_config, flags.strict_mcp_config, cwd), restricted=flags.restricted,
        builtin_tools=builtin_tools(flags.tools), json_schema=schema, plugins=plugins_at(flags.plugin_dirs),
    )  # fmt: skip
    if flags.agents_json:
        options.agents = agents_with(_agents_text(flags.agents_json, flags.print_mode), cwd, found.sources)
    if flags.session_id:
        options.session_id = flags.session_id
    wanted = session_choice.ResumeFlags(flags.cont, flags.resume, flags.fork_session, flags.session_id,
                                        flags.resume_session_at, flags.resume_drops_turn)  # fmt: skip
    try:
        options.resume = session_choice.resolve(wanted, Layout.from_env(), cwd, interactive=not flags.print_mode)
    except AgentTeamsError as e:
        if flags.output_format == "stream-json":  # a program reads why from a result line, as Claude Code's
            same = flags.resume if flags.resume and not flags.fork_session else options.session_id
            headless.emit(session_choice.refused_line(str(e), same))
        raise
    options.fork_session = flags.fork_session
    _apply_more(flags, options, found)
    if options.resume is not None and options.resume.model and flags.model is None:  # it goes on on its own model
        options.model = options.resume.model
    return _dispatch(flags, options, chosen.teammate_mode, chosen.teammate_command)


def _agents_text(value: str, print_mode: bool) -> str:
    """--agents' JSON; with --print, as claude 2.1.332 takes it, the path of a file that holds it."""
    if print_mode and not value.lstrip().startswith("{") and Path(value).expanduser().is_file():
        return prompt_file(value, "agents") or ""
    return value


def _apply_more(flags: AgentFlags, options: SessionOptions, found: Settings) -> None:
    """What claude 2.1.332's newer options change in the session about to start."""
    more = flags.more
    if more.debug is not None or more.debug_file is not None or more.debug_to_stderr:
        from agentteams.run import debug_log
        from agentteams.store.paths import config_root

        debug_log.start(more.debug, more.debug_file, more.debug_to_stderr, options.session_id, config_root())
    if more.agent:
        from agentteams.run.more_session import run_as_agent
        from agentteams.settings.agents import load_agents
        from agentteams.store.paths import config_root

        catalog = options.agents or load_agents(cwd=options.cwd, root=config_root(), scopes=found.sources)
        run_as_agent(more.agent, options, catalog, model_given=flags.model is not None)
    if more.safe_mode:  # no MCP server at all, --mcp-config's neither
        from agentteams.tools.mcp.config import McpFlags

        options.mcp = McpFlags((), True)
    elif more.bare:  # as claude's simple mode: Bash, Read and Edit (unless --tools says), --mcp-config's servers only
        from agentteams.tools.mcp.config import McpFlags

        options.builtin_tools = options.builtin_tools if options.builtin_tools is not None else BARE_TOOLS
        options.mcp = McpFlags(options.mcp.configs, True)
    if more.no_session_persistence:
        from agentteams.store.transcripts import writer

        writer.set_persist(False)
    options.name = more.name


def _dispatch(flags: AgentFlags, options: SessionOptions, where: str, command: str | None) -> int:
    from agentteams.run import headless

    if flags.agent_name or flags.agent_id or flags.team_name:
        from agentteams.run import teammate

        who = teammate.TeammateFlags(
            flags.agent_id, flags.agent_name, flags.team_name, flags.agent_color, flags.parent_session_id,
            flags.agent_type, flags.plan_mode_required, flags.lead_verify_key, model_given=flags.model is not None,
        )  # fmt: skip
        return teammate.run(options, who, flags.prompt)
    if flags.input_format == "stream-json" or flags.print_mode:  # the SDK's close sends SIGTERM 5 s after stdin ends
        from agentteams.procs.term_signal import leave_on_sigterm

        leave_on_sigterm(relay=True)
    if flags.session_mirror and flags.output_format == "stream-json":  # a program keeps the session in a store
        from agentteams.run.sdk.mirror import mirror_line

        options.mirror = mirror_line
    if flags.input_format == "stream-json":  # a program drives it (the Agent SDKs pass no -p)
        from agentteams.run.sdk import session as driven

        options.interactive = False
        asker = None if flags.more.permission_prompts == "none" else flags.permission_prompt_tool  # none: denied
        sdk = driven.SdkFlags(flags.output_format, asker, flags.partial_messages,
                              may_bypass=flags.skip_permissions or flags.allow_bypass,
                              replay=flags.more.replay_user_messages,
                              forward_text=flags.more.forward_subagent_text)  # fmt: skip
        return driven.run(options, sdk, teammate_mode=where, teammate_command=command)
    if not flags.print_mode:
        from agentteams.run import interactive

        return interactive.run(flags.prompt, options, teammate_mode=where, teammate_command=command)
    options.interactive = False
    text = headless.prompt_text(flags.prompt)
    return headless.run(text, options, flags.output_format, teammate_mode=where, teammate_command=command,
                        partial_messages=flags.partial_messages,
                        forward_text=flags.more.forward_subagent_text)  # fmt: skip
