"""`agentteams --agent-id ... --agent-name ... --team-name ...`: run as a teammate until shut down.

The same flags Claude Code gives its teammates, so either program can be the other's teammate.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentteams.errors import AgentTeamsError


@dataclass
class TeammateFlags:
    agent_id: str | None
    agent_name: str | None
    team_name: str | None
    color: str | None
    parent_session_id: str | None
    agent_type: str | None
    plan_mode_required: bool
    lead_verify_key: str | None = None  # `<ms>.<key>`: verified from here on by the runtime
    model_given: bool = False  # --model was passed (a lead always passes it); else a custom type's model counts


def _who(flags: TeammateFlags) -> tuple[str, str]:
    name, team = flags.agent_name, flags.team_name
    if flags.agent_id and "@" in flags.agent_id:
        id_name, _, id_team = flags.agent_id.partition("@")
        name, team = name or id_name, team or id_team
    if not name or not team:
        raise AgentTeamsError("a teammate needs --agent-name and --team-name (or --agent-id name@team)")
    return name, team


def _terminate(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds, so the presence file and locks are released


def _leave() -> None:
    """The runtime is done (shutdown approved, team gone): exit at once, and with its code.

    A lead closes our pane as soon as it reads the approval (Claude Code polls its inbox every second). The
    interpreter's final garbage collection over the SDK's objects took 0.3-0.6 s, so the pane's SIGHUP often
    arrived mid-exit and turned a clean exit into 129. Now: stdio flushed, a hang-up ignored, no collection."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    gc.disable()
    gc.freeze()


def _take_agent_type(options: Any, flags: TeammateFlags, root: Path) -> None:
    """Read the custom agent types of our own cwd (the lead passes only the type's name, as Claude Code's does);
    without --model, ours is the type's model."""
    from agentteams.agent.agent_types import agent_model
    from agentteams.settings.agents import load_agents

    options.agents = load_agents(options.cwd, root)
    custom = options.agents.get(flags.agent_type)
    if custom is not None and not flags.model_given:
        options.model = agent_model(custom, options.model)


def _take_fork(runtime: Any, layout: Any, me: Any) -> None:
    """A forked teammate (its lead set AGENTTEAMS_FORK_SEED): it goes on from the lead's conversation its lead left
    for it (agent/forked.py); the variable is not passed on to what it runs."""
    import os

    from agentteams.agent.forked import SEED_VAR, ForkSeed

    if os.environ.pop(SEED_VAR, None) != "1":
        return
    seed = ForkSeed.take(layout.fork_seed_file(me.team, me.name))
    if seed is not None:
        seed.adopt(runtime.session.agent, me)


def teammate_client(client: Any, name: str, *, first_party: bool) -> Any:
    """The client with the teammate's turns shaped as a real claude teammate's (its model's max_tokens, thinking shown
    as updates in its pane, effort, context management): seen from 2.1.332's teammate against the scripted server."""
    from agentteams.model.reasoning import Defaults, Reasoning, ReasoningClient

    return ReasoningClient(client, Reasoning(), name, Defaults.read(interactive=True, first_party=first_party))


def run(options: Any, flags: TeammateFlags, prompt: str | None) -> int:
    """Join the team as `flags` says and serve turns; returns the exit code (0 after an approved shutdown)."""
    from agentteams.agent.prompts import Identity
    from agentteams.backends.tmux import current_pane
    from agentteams.model.anthropic_client import AnthropicClient
    from agentteams.model.config import ModelConfig
    from agentteams.procs.fork import early as forkearly
    from agentteams.store.opener import open_store
    from agentteams.store.paths import Layout
    from agentteams.team.teammate.runtime import TeammateRuntime
    from agentteams.ui.pane import PaneRenderer

    name, team = _who(flags)
    lead_key = None
    if flags.lead_verify_key is not None:
        from agentteams.store.signing import LeadVerifyKey

        lead_key = LeadVerifyKey.parse(flags.lead_verify_key)
        if lead_key is None:  # taking the lead's word unsigned instead would undo what the key is for
            raise AgentTeamsError("--lead-verify-key must be <epoch ms>.<Ed25519 public key, base64url SPKI>")
        from agentteams.store.signing import warm_up_soon

        warm_up_soon()  # a cold start imports the library beside its other set-up, not when the first message arrives
    layout = Layout.from_env()
    store = open_store(layout)
    config = store.teams.read(team)  # a missing team is one clear line, before any model set-up
    if config.member(name) is None:
        raise AgentTeamsError(f"team {config.name!r} has no member {name!r}: the lead registers teammates first")
    from agentteams.settings.keyhelper import credentials_env

    model_config = ModelConfig.from_env(credentials_env(options.settings.api_key_helper, options.cwd))
    _take_agent_type(options, flags, layout.root)
    options.team_role = "teammate"
    options.identity = Identity(name, config.name, lead=config.lead_name, agent_type=flags.agent_type,
                                color=flags.color)  # fmt: skip
    options.plan_mode_required = flags.plan_mode_required
    options.interactive = True  # its permission questions go to the lead, even with -p
    pane = current_pane() or ""
    early = forkearly.awaiting_pane()  # started before its pane: its id comes when the pane's launcher attaches
    renderer = PaneRenderer(sys.stdout, name=name, color=flags.color)
    client = AnthropicClient(model_config)
    if early:
        client.before_send = forkearly.request_out  # the lead makes our pane once our first request is out
    runtime = TeammateRuntime(
        options, teammate_client(client, name, first_party=model_config.provider is None), layout=layout, store=store,
        backend="tmux" if pane or early else "process", pane_id=pane, on_event=renderer.agent_event,
        on_team_event=renderer.team_event, secrets=tuple(model_config.secrets()), lead_key=lead_key,
    )  # fmt: skip
    _take_fork(runtime, layout, options.identity)
    # started before its pane: the pane's id goes into its presence as soon as it attaches (`status`, `cleanup`)
    forkearly.on_pane(runtime.pane_attached)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminate)
    renderer.banner(f"{name} in team {config.name} (lead: {config.lead_name}); waiting for messages")
    code = runtime.run()
    _leave()
    return code
