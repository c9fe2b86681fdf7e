"""Starting teammates and knowing whether they still run: tmux panes (a process each) or in-process threads.

A tmux teammate is `agentteams --agent-id ...` (or `--teammate-command`) in its own pane; the key is never in argv.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agentteams import diagnostics
from agentteams.agent.agenttype import agent_model
from agentteams.agent.loop import AgentEvent
from agentteams.agent.mcpwire import McpFlags
from agentteams.agent.prompts import Identity
from agentteams.agent.session import SessionOptions
from agentteams.errors import AgentTeamsError, InvalidNameError
from agentteams.model.providers import PROVIDER_ENV, VERTEX_REGION_PREFIX
from agentteams.model.types import ModelClient
from agentteams.pids import pid_alive, proc_start
from agentteams.settings.types import Settings
from agentteams.store.api import Store
from agentteams.store.paths import LEAD_NAME, Layout, agent_name, team_dir_name
from agentteams.store.signing import LeadVerifyKey
from agentteams.store.watch import WakeEvent
from agentteams.team.beside import Beside
from agentteams.team.budget import spawn_budget
from agentteams.team.delivery import TeamEvent
from agentteams.team.nodeplace import Placement
from agentteams.team.spawnopts import teammate_options
from agentteams.team.versionprobe import VersionProbe

if TYPE_CHECKING:
    from agentteams.agent.session import Session
    from agentteams.store.records import Member
    from agentteams.team.roster import Roster

Backend = Literal["tmux", "in-process"]
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")  # Claude Code's rule for teammate names
# What a teammate process needs from the lead's environment (never the API key: it comes from the
# fork server or the tmux server's environment).
FORWARDED_ENV = (
    "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_MAX_RETRIES", "API_TIMEOUT_MS", "HTTP_PROXY",
    "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_ERROR_REPORTING",
    "DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER", "DO_NOT_TRACK", "CLAUDE_CODE_SUBAGENT_MODEL", "IS_SANDBOX",
    "AGENTTEAMS_WATCH", "AGENTTEAMS_DEBUG", "AGENTTEAMS_FORKSERVER", "PATH", "HOME", "LANG", "TERM", *PROVIDER_ENV,
    "AGENTTEAMS_STORE", "AGENTTEAMS_REDIS_USER",  # the team's store; a Redis password never comes from here
)  # fmt: skip


@dataclass
class SpawnRequest:
    """Everything a new teammate is started with."""

    name: str
    team: str
    color: str
    cwd: Path
    parent_session_id: str
    model: str
    permission_mode: str = "default"
    plan_mode_required: bool = False
    agent_type: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    lead_key: LeadVerifyKey | None = None  # the public half of the lead's key for this teammate
    settings: Settings = field(default_factory=Settings)  # the lead's effective settings, inherited
    resume: str | None = None  # a relaunch after a crash: the session id it goes on with (`--resume`)
    mcp: McpFlags = field(default_factory=McpFlags)  # the lead's --mcp-config values, passed on as given
    placement: Placement = field(default_factory=Placement)  # a node asked for (team/nodespawn.py)

    @property
    def agent_id(self) -> str:
        return f"{self.name}@{self.team}"


@dataclass
class Handle:
    """A started teammate: where it runs and how to stop it."""

    name: str
    backend: Backend
    pane_id: str = ""
    pane_pid: int | None = None  # the pane's process, when known: its liveness is read from /proc, not asked of tmux
    pane_started: str | None = None  # that process's start time (a reused pid is not it)
    thread: threading.Thread | None = None
    stop: threading.Event = field(default_factory=WakeEvent)  # wakes its idle wait at once
    interrupt: threading.Event | None = None  # ends an in-process teammate's running turn


class Spawner(Protocol):
    """What a lead needs of a way to start teammates."""

    backend: Any

    @property
    def takes_lead_key(self) -> bool: ...  # can the teammate check a lead signature (on its command line, in memory)?

    def spawn(self, req: SpawnRequest) -> Handle: ...
    def alive(self, handle: Handle, team: str) -> bool: ...
    def stop(self, handle: Handle) -> None: ...


def teammate_argv(req: SpawnRequest, executable: list[str]) -> list[str]:
    """The teammate command line, flag for flag as Claude Code starts its teammates."""
    argv = [
        *executable, "--agent-id", req.agent_id, "--agent-name", req.name, "--team-name", req.team,
        "--agent-color", req.color, "--parent-session-id", req.parent_session_id,
    ]  # fmt: skip
    if req.lead_key is not None:
        argv += ["--lead-verify-key", req.lead_key.argument()]
    if req.agent_type:
        argv += ["--agent-type", req.agent_type]
    if req.plan_mode_required:
        argv.append("--plan-mode-required")
    inherited = req.settings.for_teammate()  # without `env`: see Settings.for_teammate
    if inherited is not None:
        argv.append(f"--settings={inherited}")  # JSON needs quoting: Claude Code's lead writes `--opt=<quoted>` then
    custom = req.settings.permissions.default_mode not in (None, "default")
    if req.permission_mode == "bypassPermissions":
        argv.append("--dangerously-skip-permissions")
    elif req.permission_mode != "default" or req.resume or custom:  # even default: settings or a resumed session lose
        argv += ["--permission-mode", req.permission_mode]
    argv += ["--model", req.model, *req.mcp.argv()]
    for rule in req.allowed_tools:
        argv += ["--allowedTools", rule]
    for rule in req.disallowed_tools:
        argv += ["--disallowedTools", rule]
    if req.resume:
        argv += ["--resume", req.resume]
    return argv


def own_executable() -> list[str]:
    """This program, by resolved path: a shim on PATH (pyenv) would cost ~200 ms per spawn."""
    script = Path(sys.executable).with_name("agentteams")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    found = shutil.which("agentteams")
    return [found] if found else [sys.executable, "-m", "agentteams"]


def teammate_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in FORWARDED_ENV or k.startswith(VERTEX_REGION_PREFIX)}
    env.update({"CLAUDECODE": "1", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1", **extra})
    return env


class TmuxSpawner:
    """Each teammate a process in its own pane beside the lead (or in the swarm session outside tmux)."""

    backend: Backend = "tmux"

    def __init__(
        self, store: Store, *, socket_path: str | None = None, command: list[str] | None = None,
        extra_env: Callable[[], dict[str, str]] | None = None, launcher: list[str] | None = None,
    ) -> None:  # fmt: skip
        from agentteams.backends.tmux import TmuxBackend, current_pane, enclosing_server

        self.store = store
        self.tmux = TmuxBackend(socket_path or enclosing_server())  # inside tmux: the lead's own server
        self.command = command or own_executable()
        self.extra_env, self.launcher = extra_env or dict, launcher or []  # launcher: cli/panelaunch, see spawn
        self.target_pane = current_pane()
        self._version = VersionProbe(self.command, ours=self.command == own_executable())

    @property
    def takes_lead_key(self) -> bool:
        """Whether the teammate program accepts `--lead-verify-key`: ours does, a real `claude` from 2.1.330."""
        return self._version.takes_lead_key()

    @property
    def runs_ours(self) -> bool:
        """Whether its teammates are agentteams rather than a real `claude` (`--teammate-command`)."""
        return self._version.is_ours()

    def spawn(self, req: SpawnRequest) -> Handle:
        served = self.extra_env()  # a fork server's: the pane runs the lean launcher that reaches it
        argv, env = [*(self.launcher if served else []), *teammate_argv(req, self.command)], teammate_env(served)
        pane, pid = self.tmux.spawn_pane_process(
            self.target_pane, req.name, req.color, argv, req.cwd, env, tag=req.agent_id
        )
        return Handle(req.name, "tmux", pane_id=pane, pane_pid=pid, pane_started=proc_start(pid) if pid else None)

    def alive(self, handle: Handle, team: str) -> bool:
        # the lead asks this of every teammate twice a second: a tmux client (or even a presence file) per teammate
        # cost a 16-member team's idle lead ~3 % of a core. The pane's process is the teammate, or the launcher
        # that relays a forked teammate's exit (cli/launch.py), or the shell a real `claude` runs under: its end
        # is the teammate's end, and /proc says so at next to no cost.
        if handle.pane_pid is not None and handle.pane_started is not None:
            return pid_alive(handle.pane_pid) and proc_start(handle.pane_pid) == handle.pane_started
        if not self.tmux.pane_alive(handle.pane_id):
            return False
        presence = self.store.presence.read(team, handle.name)
        if presence is None or presence.pane_id not in ("", handle.pane_id):
            return True  # none yet, or an earlier member's of that name (its last "exited" may land after it left)
        return presence.liveness() not in ("exited", "dead")  # a stopped one is still there

    def stop(self, handle: Handle) -> None:
        self.tmux.kill_pane(handle.pane_id)

    def focus(self, handle: Handle) -> None:
        self.tmux.select_pane(handle.pane_id, zoom=False)


class InProcessSpawner:
    """Each teammate a thread of the lead's process: same files, same protocol, one model client."""

    backend: Backend = "in-process"
    takes_lead_key = True  # handed over in memory

    def __init__(
        self, layout: Layout, client: ModelClient, *, store: Store | None = None, secrets: tuple[str | None, ...] = (),
        on_event: Callable[[str, AgentEvent], None] | None = None,
        on_team_event: Callable[[TeamEvent], None] | None = None,
    ) -> None:  # fmt: skip
        self.layout = layout  # each teammate's own files (transcripts, plans)
        self.store = store
        self.client = client
        self.secrets = secrets
        self.on_event = on_event or (lambda _n, _e: None)
        self.on_team_event = on_team_event

    @staticmethod
    def options_for(req: SpawnRequest, layout: Layout | None = None) -> SessionOptions:
        """The teammate's session options: what the request says, the lead's settings included (and, for a
        relaunch, the conversation it goes on with, found under `layout`)."""
        from agentteams.store.transcript_read import find, load

        found = find(layout, req.cwd, req.resume) if req.resume and layout is not None else None
        return SessionOptions(
            cwd=req.cwd, model=req.model, permission_mode=req.permission_mode, allowed_tools=req.allowed_tools,
            disallowed_tools=req.disallowed_tools, team_role="teammate", plan_mode_required=req.plan_mode_required,
            interactive=True,  # a teammate can always ask: its questions go to the lead
            identity=Identity(req.name, req.team, agent_type=req.agent_type, color=req.color), settings=req.settings,
            resume=load(found) if found is not None else None,
            mcp=req.mcp,  # its own connections: each teammate starts the servers itself
        )  # fmt: skip

    def spawn(self, req: SpawnRequest) -> Handle:
        from agentteams.team.teammate import TeammateRuntime

        handle = Handle(req.name, "in-process")
        options = self.options_for(req, self.layout)
        runtime = TeammateRuntime(
            options, self.client, layout=self.layout, store=self.store, backend="in-process", stop=handle.stop,
            on_event=lambda e: self.on_event(req.name, e), on_team_event=self.on_team_event, secrets=self.secrets,
            lead_key=req.lead_key,
        )  # fmt: skip

        def serve() -> None:
            try:
                runtime.run()
            except Exception as e:  # a crashed teammate thread is a dead teammate, not a dead lead
                diagnostics.warning("teammate %s stopped: %s: %s", req.name, type(e).__name__, e)

        handle.interrupt = runtime.ctx.interrupt
        handle.thread = threading.Thread(target=serve, name=f"teammate-{req.name}", daemon=True)
        handle.thread.start()
        return handle

    def alive(self, handle: Handle, team: str) -> bool:
        return handle.thread is not None and handle.thread.is_alive()

    def stop(self, handle: Handle) -> None:
        handle.stop.set()
        if handle.interrupt is not None:
            handle.interrupt.set()
        if handle.thread is not None and handle.thread is not threading.current_thread():
            handle.thread.join(timeout=5)

    def focus(self, handle: Handle) -> None:
        raise AgentTeamsError(f"{handle.name} runs inside the lead's process: it has no pane to focus")


@dataclass
class Spawned:
    """What a spawn call made: a started member, or (handle None) the live member already holding the name."""

    member: Member
    handle: Handle | None

    def tool_result(self, team: str) -> str:
        """What the Task call tells the model: the new member, or that the name's live member was returned."""
        m = self.member
        if self.handle is None:
            return (
                f"{m.name} is already a live member of team {team}: nothing new was started.\n"
                f"agent_id: {m.agent_id}\nname: {m.name}\n"
                f"Its prompt was not sent again; use SendMessage to give {m.name} more work."
            )
        return (
            f"Spawned successfully.\nagent_id: {m.agent_id}\nname: {m.name}\n"
            + (f"node: {m.node}\n" if m.node else "")
            + "The agent is now running and will receive instructions via mailbox."
        )


def spawn_member(
    session: Session, spawner: Spawner, team: str, args: dict[str, Any], roster: Roster | None = None
) -> Spawned:
    """Register the teammate, write its prompt as its first message, start it; undone if the start fails. A name a
    live member holds (say a retried call) starts nothing: that member comes back, its prompt not sent again."""
    from agentteams.model.aliases import resolve_model
    from agentteams.store.api import NewMember
    from agentteams.team import worktrees
    from agentteams.team.roster import Roster

    name, prompt = _checked_call(team, args)
    opts = session.options
    own = teammate_options(session, args)  # its mode, cwd and tool rules; a bad one refused before anything starts
    kind = str(args.get("subagent_type") or "")
    custom = own.agents.get(kind)  # a custom type (of its directory): its model unless the call names one (Claude's)
    model = resolve_model(str(args["model"])) if args.get("model") else agent_model(custom, session.model)
    budget = spawn_budget(args, opts.settings)  # a bad figure is refused before anything is made
    roster = roster or Roster(session.store, spawner)
    member, added = roster.reserve(team, NewMember(
        name=name, agent_type=kind if kind and kind != "general-purpose" else None, model=model,
        prompt=prompt, plan_mode_required=own.plan_mode_required, cwd=str(own.cwd), is_active=True,
    ))  # fmt: skip
    if not added:
        return Spawned(member, None)
    tree = worktrees.own_worktree(session, team, member.name, args, roster)  # isolation: "worktree"
    cwd = tree or own.cwd
    if budget.tokens or budget.usd:  # before it starts: its first answers are then reported at once
        session.store.teams.set_member_fields(team, member.name, budget_tokens=budget.tokens, budget_usd=budget.usd)
    req = SpawnRequest(
        name=member.name, team=team, color=member.color or "blue", cwd=cwd, parent_session_id=opts.session_id,
        model=model, permission_mode=own.mode, plan_mode_required=own.plan_mode_required,
        agent_type=member.agent_type, settings=own.settings, allowed_tools=own.allowed_tools,
        disallowed_tools=own.disallowed_tools, mcp=opts.mcp, placement=own.placement,
    )  # fmt: skip
    try:
        handle = _start(session, spawner, req, prompt)
    except BaseException:
        roster.abandoned(member.name)  # its entry is gone: a retry starts afresh
        if tree is not None:  # and so is the worktree made for it, unless something was written there already
            worktrees.drop(session, team, member.name)
        raise
    roster.started(member.name, handle)  # the handle now answers for it, with no gap a second spawn could slip into
    # isActive is not written here: it went in with the reservation, before the teammate ran; since then only the
    # teammate says it (one that finished its first turn before this write would otherwise stay "active" for ever,
    # and its lead would never see the team idle)
    member = session.store.teams.set_member_fields(  # as it is now (a node placement recorded its node)
        team, member.name, tmux_pane_id=handle.pane_id, backend_type=spawner.backend,
        mode=req.permission_mode, allowed_tools=req.allowed_tools or None,
        disallowed_tools=req.disallowed_tools or None,
    )  # fmt: skip
    return Spawned(member, handle)


def _checked_call(team: str, args: dict[str, Any]) -> tuple[str, str]:
    """The call's teammate name and prompt, or a ToolInputError saying what is wrong with them."""
    from agentteams.store.protocol import parse_message
    from agentteams.tools.base import ToolInputError

    wanted = str(args.get("team_name") or team)
    if team_dir_name(wanted) != team_dir_name(team):
        raise ToolInputError(f'You lead team "{team}"; teammates can only join that team.')
    try:
        name = agent_name(str(args.get("name", "")))  # refuses control characters before they reach the config
    except InvalidNameError as e:
        raise ToolInputError(str(e)) from None
    if not NAME_PATTERN.match(name) or name.lower() in (LEAD_NAME, "main"):
        raise ToolInputError(f"{name!r} cannot be a teammate's name: use letters, digits, - and _ (not team-lead).")
    prompt = str(args.get("prompt", ""))
    if parse_message(prompt) is not None:
        raise ToolInputError("A teammate's prompt must be instructions, not a protocol message.")
    return name, prompt


def _start(session: Session, spawner: Spawner, req: SpawnRequest, prompt: str) -> Handle:
    """Key, first message and process (or thread) of a reserved member; its entry, key and inbox go if one fails."""
    from agentteams.tools.base import ToolInputError

    team, name, store = req.team, req.name, session.store
    try:  # Claude Code 2.1.330's lead signs what it writes to each teammate that can check it
        req.lead_key = store.keyring.new_lead_key(team, name) if spawner.takes_lead_key else None
    except Exception as e:
        store.teams.remove_member(team, name)
        raise ToolInputError(f"Could not make a signing key for {name} ({e}); try --teammate-mode in-process") from e
    inline = spawner.backend != "tmux"  # a pane takes ~15 ms to start: the prompt's fsync'd write goes meanwhile
    sending = Beside(lambda: store.mail.send(team, name, prompt, sender=LEAD_NAME), inline=inline)
    try:
        return sending.joined(spawner.spawn, req, undo=spawner.stop)
    except Exception as e:
        store.keyring.drop_lead_key(team, name)
        store.teams.remove_member(team, name)
        store.mail.remove_inbox(team, name)
        raise ToolInputError(f"Could not start {name}: {e}") from e
