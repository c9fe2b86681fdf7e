"""A teammate spawned by the Task tool: its call checked, its member registered and its prompt queued, then started;
undone when the start fails, and a live name's member returned instead of a second one."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentteams.agent.agent_types import agent_model
from agentteams.errors import InvalidNameError
from agentteams.store.paths import LEAD_NAME, agent_name, team_dir_name
from agentteams.team.budget import spawn_budget
from agentteams.team.nodes.placement import LOCAL
from agentteams.team.spawn.options import teammate_options
from agentteams.team.spawn.parallel_call import Beside
from agentteams.tools.spawn_limits import FORK_TYPE, FORK_VAR, SpawnLimits

if TYPE_CHECKING:
    from agentteams.agent.forked import ForkSeed
    from agentteams.agent.session import Session
    from agentteams.store.records import Member
    from agentteams.team.spawn.roster import Roster

from agentteams.team.spawn.base import NAME_PATTERN, Handle, Spawner, SpawnRequest


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
    from agentteams.team.spawn import worktrees
    from agentteams.team.spawn.roster import Roster

    name, prompt = _checked_call(team, args)
    opts = session.options
    seed = _fork_seed(session, spawner, args)  # a forked teammate: its lead's conversation, on this machine
    if seed is not None:
        args = {**args, "node": LOCAL}
    own = teammate_options(session, args)  # its mode, cwd and tool rules; a bad one refused before anything starts
    kind = str(args.get("subagent_type") or "") if seed is None else ""
    custom = own.agents.get(kind)  # a custom type (of its directory): its model unless the call names one (Claude's)
    model = resolve_model(str(args["model"])) if args.get("model") else agent_model(custom, session.model)
    model = seed.model if seed is not None else model  # a fork's requests are its lead's: so is its model
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
        disallowed_tools=own.disallowed_tools, mcp=opts.mcp, placement=own.placement, restricted=opts.restricted,
        fork=seed,
    )  # fmt: skip
    seed_file = session.layout.fork_seed_file(team, member.name) if seed and spawner.backend == "tmux" else None
    try:
        if seed is not None and seed_file is not None:  # a pane's process takes it at its start
            seed.write(seed_file)
        handle = _start(session, spawner, req, prompt)
    except BaseException:
        if seed_file is not None:
            seed_file.unlink(missing_ok=True)
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


def _fork_seed(session: Session, spawner: Spawner, args: dict[str, Any]) -> ForkSeed | None:
    """A `subagent_type: "fork"` teammate's start (the lead's conversation as its requests send it), or None for
    another type; ToolInputError where a fork cannot start: forks off, on a node, or a teammate program not ours."""
    from agentteams.agent.forked import ForkSeed
    from agentteams.team.nodes.spawner import NodeSpawner
    from agentteams.team.spawn.spawners import TmuxSpawner
    from agentteams.tools.base import ToolInputError

    if args.get("subagent_type") != FORK_TYPE:
        return None
    if not SpawnLimits.from_env(os.environ).fork:
        raise ToolInputError(f"{FORK_VAR} turns forks off: choose another subagent_type for this teammate.")
    if args.get("node") not in (None, LOCAL) or args.get("repo"):
        raise ToolInputError("A forked teammate starts from your conversation here: leave out node and repo.")
    local = spawner.local if isinstance(spawner, NodeSpawner) else spawner
    if isinstance(local, TmuxSpawner) and not local.runs_ours:
        raise ToolInputError("A forked teammate needs agentteams as the teammate program (--teammate-command names "
                             "another): choose another subagent_type.")  # fmt: skip
    return ForkSeed.of(session.agent)


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
