"""What every way of starting teammates shares: a spawn request, the handle of a started teammate, the `Spawner`
interface, and the command line and environment a teammate process gets (the key is never in argv)."""

from __future__ import annotations

import os
import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agentteams.agent.mcp_servers import McpFlags
from agentteams.model.catalog import VERTEX_REGION_PREFIX
from agentteams.model.providers import PROVIDER_ENV
from agentteams.settings.types import Settings
from agentteams.store.fs.watch import WakeEvent
from agentteams.store.signing import LeadVerifyKey
from agentteams.team.nodes.placement import Placement

if TYPE_CHECKING:
    from agentteams.agent.forked import ForkSeed


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
    restricted: bool = False  # the lead runs with --restricted: so does its teammate (no Bash, settings files unread)
    fork: ForkSeed | None = None  # a forked teammate's start: its lead's conversation (agent/forked.py)

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
    if req.restricted:
        argv.append("--restricted")
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
    import shutil  # (with bz2 and lzma) only when the console script is not beside this interpreter

    found = shutil.which("agentteams")
    return [found] if found else [sys.executable, "-m", "agentteams"]


def teammate_env(extra: dict[str, str], req: SpawnRequest | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in FORWARDED_ENV or k.startswith(VERTEX_REGION_PREFIX)}
    env.update({"CLAUDECODE": "1", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1", **extra})
    if req is not None and req.fork is not None:  # its seed file waits for it (team/spawn/member.py wrote it)
        from agentteams.agent.forked import SEED_VAR

        env[SEED_VAR] = "1"
    return env
