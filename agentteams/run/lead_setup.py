"""Composition of a lead: model client, session, teammate spawner (tmux + fork server, or in-process), runtime.

Shared by the interactive REPL and headless `-p`; the caller owns the terminal.
"""

from __future__ import annotations

import os
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentteams.agent.loop import AgentEvent, Answer, PermissionAsk
from agentteams.agent.structured import attach
from agentteams.backends.tmux import inside_tmux
from agentteams.errors import AgentTeamsError
from agentteams.model.types import ModelClient
from agentteams.run.peer_setup import PeerStart, TurnEnders, When, start_peers
from agentteams.team.delivery import TeamEvent
from agentteams.team.lead.permission_relay import PermissionJudge
from agentteams.team.lead.runtime import LeadRuntime
from agentteams.team.nodes.spawner import NodeSpawner

if TYPE_CHECKING:
    from agentteams.model.config import ModelConfig
    from agentteams.team.teamfile.seeding import TeamSeed


@dataclass
class LeadParts:
    runtime: LeadRuntime
    backend: str
    stoppers: list[Callable[[], None]] = field(default_factory=list)
    peers: PeerStart | None = None  # the session's place among the other sessions on this machine

    def close(self, *, team_down: bool = True, timeout: float = 20.0) -> None:
        """Stop the runtime; with `team_down`, a team still standing is shut down first (nothing orphaned).
        SessionEnd hooks run last, after the TeamDeleted ones."""
        hooks = self.runtime.session.hooks
        try:
            team = self.runtime.team
            if team_down and team:
                self.runtime.shutdown_team(timeout=timeout)
                hooks.team_deleted(team)
        finally:
            self.runtime.close()
            for stop in self.stoppers:
                stop()
            hooks.session_end("other")


def use_tmux(mode: str, command: list[str] | None) -> bool:
    if mode == "in-process":
        if command:
            raise AgentTeamsError("--teammate-command starts processes: it needs --teammate-mode tmux or auto")
        return False
    return mode == "tmux" or inside_tmux() or bool(command)


def lead_client(client: ModelClient, options: Any, *, first_party: bool = True) -> ModelClient:
    """The client wrapped as the flags ask: the turns of the lead and of the agents it runs shaped for their model
    (max_tokens, thinking, effort, context management on Anthropic's own API: `first_party`) and by --thinking,
    --effort, --betas, ... (model/reasoning.py), then --fallback-model's second try (whose model is shaped by its own
    family)."""
    from agentteams.model.reasoning import Defaults, ReasoningClient
    from agentteams.store.paths import LEAD_NAME

    defaults = Defaults.read(interactive=bool(options.interactive), first_party=first_party)
    client = ReasoningClient(client, options.reasoning, LEAD_NAME, defaults)
    if options.fallback_model:
        from agentteams.model.aliases import resolve_model
        from agentteams.model.fallback import FallbackClient

        client = FallbackClient(client, resolve_model(options.fallback_model))
    return client


def build_lead(
    options: Any, *, teammate_mode: str = "auto", teammate_command: str | None = None,
    on_event: Callable[[AgentEvent], None] | None = None, on_team_event: Callable[[TeamEvent], None] | None = None,
    on_teammate_event: Callable[[str, AgentEvent], None] | None = None,
    ask: Callable[[PermissionAsk], Answer] | None = None, judge: PermissionJudge | None = None,
    on_turn_end: Callable[[Any], None] | None = None, seed: TeamSeed | None = None, warm: bool = False,
    config: ModelConfig | None = None, peers: When = "now", ask_held: Callable[[str, str], bool] | None = None,
) -> LeadParts:  # fmt: skip
    """Everything a lead needs, started; the model client is built (and the key checked) first, from `config` when
    the caller has checked it already. A `seed` (a team file's) makes the team and its tasks before the runtime starts
    and spawns its roles right after. `warm`: the first prompt is still to come (a person types it, a program sends
    it): the HTTP stack loads meanwhile. `peers`: when the session's endpoint among the other sessions is published
    (run/peer_setup.py); `ask_held`: a REPL's question about a message another session sent that the policy held."""
    from agentteams.agent.session import Session
    from agentteams.model.anthropic_client import AnthropicClient
    from agentteams.model.config import ModelConfig
    from agentteams.settings.keyhelper import credentials_env
    from agentteams.store.opener import open_store
    from agentteams.store.paths import Layout
    from agentteams.team.spawn.spawners import InProcessSpawner, TmuxSpawner

    if options.resume is not None or warm:  # a resumed lead's request comes at once: its HTTP stack loads meanwhile
        from agentteams.model.anthropic_client import warm_up

        plain = os.environ.get("ANTHROPIC_BASE_URL", "").startswith("http://")  # no CA store to load (~50 ms)
        threading.Thread(target=warm_up, kwargs={"tls": not plain}, name="sdk-warm-up", daemon=True).start()
    if config is None:
        config = ModelConfig.from_env(credentials_env(options.settings.api_key_helper, options.cwd))
    client = lead_client(AnthropicClient(config), options, first_party=config.provider is None)
    secrets = tuple(config.secrets())
    layout = Layout.from_env()
    store = open_store(layout)
    command, stoppers = shlex.split(teammate_command) if teammate_command else None, list[Callable[[], None]]()
    spawner: Any
    if use_tmux(teammate_mode, command) and command is None:  # ours start from a warm, pre-imported process
        from agentteams.procs.fork.client import ForkServer
        from agentteams.team.spawn.prestart import PrestartingSpawner

        server = ForkServer.start()
        stoppers.append(server.stop)
        spawner = PrestartingSpawner(store, server.prestart, extra_env=server.env, launcher=server.launcher_argv())
    elif use_tmux(teammate_mode, command):
        spawner = TmuxSpawner(store, command=command)
    else:
        spawner = InProcessSpawner(layout, client, store=store, secrets=secrets, on_event=on_teammate_event,
                                   on_team_event=on_team_event)  # fmt: skip
    spawner = NodeSpawner(store, spawner)  # on a registered node (`agentteams node`) if any, else as above
    session = attach(Session(options, client, layout=layout, store=store, on_event=on_event, ask=ask, secrets=secrets),
                     options.json_schema)  # --json-schema's StructuredOutput, if given  # fmt: skip
    if options.name:  # -n: the display name the picker shows, recorded as claude records it
        session.transcript.named(options.name)
    enders = TurnEnders([on_turn_end] if on_turn_end is not None else [])  # the peer endpoint's joins them
    runtime = LeadRuntime(session, spawner, on_team_event=on_team_event, judge=judge, on_turn_end=enders)
    published = start_peers(runtime, on_team_event, enders, peers, ask_held)  # other sessions here: a record, a socket
    if options.resume is not None and not options.fork_session:  # a resumed lead leads its team again
        runtime.resume_team()
    parts = LeadParts(runtime, spawner.backend, [*stoppers, published.close], published)
    try:
        if seed is not None:
            seed.create(runtime.session)
            runtime.hold_until_first_prompt()  # the caller submits seed.first_prompt(...)
        runtime.start()
        if seed is not None:
            seed.spawn(runtime.spawn_teammate, runtime.session.options.cwd)
    except BaseException:
        parts.close(team_down=True)  # a role that cannot start leaves no half team behind
        raise
    return parts
