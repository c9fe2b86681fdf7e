"""Membership rules every store shares: who joins under which name and colour, a departed member kept aside and
brought back, the lead's claim, the typed fields of a member; each a change of the config made through the store's own
`update` (a lock for the file store, compare-and-set for Redis)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from agentteams.errors import ConflictError, CorruptFileError, NotFoundError
from agentteams.pids import LeadProcess
from agentteams.store.api import NewMember
from agentteams.store.fs.atomic_json import epoch_ms
from agentteams.store.paths import LEAD_NAME, agent_id, agent_name, inbox_key, team_dir_name, unique_name
from agentteams.store.records import COLORS, MAX_DEPARTED, Member, TeamConfig

T = TypeVar("T")


def next_color(config: TeamConfig) -> str:
    """First palette colour no current teammate uses; cycles by join count when all are taken."""
    used = {m.color for m in config.members if m.name != config.lead_name}
    for color in COLORS:
        if color not in used:
            return color
    return COLORS[(len(config.members) - 1) % len(COLORS)]


class Membership:
    """The member changes of a team store, over its `update` (a read-modify-write of one config, atomic)."""

    def read(self, team: str) -> TeamConfig:
        raise NotImplementedError

    def refuse_delete(self, team: str, force: bool) -> None:
        """A team is deleted only without members but its lead, or with `force` (which also takes a config that
        does not read)."""
        try:
            config = self.read(team)
            others = [m.name for m in config.members if m.agent_id != config.lead_agent_id]
            if others and not force:
                raise ConflictError(
                    f"team {config.name!r} still has members: {', '.join(others)}; shut them down first or pass --force"
                )
        except (CorruptFileError, NotFoundError):
            if not force:
                raise

    def canonical(self, team: str) -> str:
        """The name a team is stored under (Claude Code's folder name for it)."""
        return team_dir_name(team)

    def update(self, team: str, change: Callable[[TeamConfig], T], *, write_if: Callable[[T], bool] | None = None) -> T:
        raise NotImplementedError

    def claim_lead(self, team: str, lead_process: LeadProcess, *, expected: LeadProcess | None = None) -> bool:
        """Record `lead_process` as the team's lead process if the recorded one is still `expected` (compared on
        `pid` and `claimedAt`, as 2.1.330's takeover does; None: no readable record). False, and nothing written,
        when another process claimed the team first."""

        def claimed(lp: LeadProcess | None) -> tuple[int, float] | None:
            return None if lp is None else (lp.pid, lp.claimed_at)

        def change(config: TeamConfig) -> bool:
            if claimed(config.lead_process) != claimed(expected):
                return False
            config.lead_process = lead_process
            return True

        return self.update(team, change, write_if=bool)

    def add_member(self, team: str, new: NewMember) -> Member:
        return self.update(team, lambda config: _join(config, new))

    def add_member_once(self, team: str, new: NewMember, live: Callable[[Member], bool]) -> tuple[Member, bool]:
        """Add `new` unless a member already holds its name (by inbox) and `live` says it runs: then that member
        and False, nothing written. Checked and added under the config's lock, so two spawns of one name make one
        member. A member that is not live keeps its entry; the newcomer's name gets `-2`."""

        def change(config: TeamConfig) -> tuple[Member, bool]:
            key = inbox_key(agent_name(new.name))
            held = next((m for m in config.members if inbox_key(m.name) == key), None)
            if held is not None and held.agent_id != config.lead_agent_id and live(held):
                return held, False
            return _join(config, new), True

        return self.update(team, change, write_if=lambda added: added[1])

    def depart_member(self, team: str, name: str) -> Member | None:
        """A teammate that died: its entry moves from the members to the departed (the latest MAX_DEPARTED kept), so
        a resume can start it as it was. None when it was not a member."""

        def change(config: TeamConfig) -> Member | None:
            member = config.member(name)
            if member is None or member.agent_id == config.lead_agent_id:
                return None
            config.members.remove(member)
            kept = [m for m in config.departed or [] if m.name != member.name]
            config.departed = [*kept, member][-MAX_DEPARTED:]
            return member

        return self.update(team, change, write_if=lambda gone: gone is not None)

    def return_member(self, team: str, name: str) -> Member | None:
        """A departed teammate's entry back among the members, as it was; None when none of that name died or a
        member holds the name now."""

        def change(config: TeamConfig) -> Member | None:
            found = next((m for m in config.departed or [] if m.name == name), None)
            if found is None or config.member(name) is not None:
                return None
            config.departed = [m for m in config.departed or [] if m is not found] or None
            config.members.append(found)
            return found

        return self.update(team, change, write_if=lambda back: back is not None)

    def remove_member(self, team: str, name_or_id: str) -> Member | None:
        """Remove a teammate by name or agent id; None when it was not a member. The lead stays."""

        def change(config: TeamConfig) -> Member | None:
            member = config.member(name_or_id)
            if member is None:
                return None
            if member.agent_id == config.lead_agent_id:
                raise ConflictError("the team lead cannot be removed from its own team")
            config.members.remove(member)
            return member

        return self.update(team, change)

    def set_member_fields(self, team: str, name_or_id: str, **fields: Any) -> Member:
        """Set typed fields of one member (e.g. is_active, mode, tmux_pane_id, backend_type)."""

        def change(config: TeamConfig) -> Member:
            member = config.member(name_or_id)
            if member is None:
                raise NotFoundError(f"team {config.name!r} has no member {name_or_id!r}")
            member.assign(**fields)
            return member

        return self.update(team, change)

    def set_active(self, team: str, name: str, active: bool) -> Member:
        return self.set_member_fields(team, name, is_active=active)

    def set_mode(self, team: str, name: str, mode: str) -> Member:
        return self.set_member_fields(team, name, mode=mode)


def _join(config: TeamConfig, new: NewMember) -> Member:
    """Append `new` to the config under the first free name (`-2`, `-3`, ... when its inbox is taken)."""
    name = unique_name(agent_name(new.name), [m.name for m in config.members])
    member = Member(
        agent_id=agent_id(name, config.name), name=name, agent_type=new.agent_type,
        color=new.color or next_color(config), joined_at=epoch_ms(),
        tmux_pane_id=new.tmux_pane_id, subscriptions=[], model=new.model, prompt=new.prompt,
        plan_mode_required=new.plan_mode_required, cwd=new.cwd or os.getcwd(),
        backend_type=new.backend_type, mode=new.mode, is_active=new.is_active,
    )  # fmt: skip
    config.members.append(member)
    return member


def new_config(
    name: str, description: str | None, lead_session_id: str, lead_model: str | None, lead_agent_type: str,
    cwd: str | None, lead_pane_id: str, lead_backend_type: str | None, lead_process: LeadProcess | None,
) -> TeamConfig:  # fmt: skip
    """A new team's config, its lead the only member (every store writes the same one)."""
    now = epoch_ms()
    lead = Member(
        agent_id=agent_id(LEAD_NAME, name), name=LEAD_NAME, agent_type=lead_agent_type, model=lead_model,
        joined_at=now, tmux_pane_id=lead_pane_id, cwd=cwd or os.getcwd(), subscriptions=[],
        backend_type=lead_backend_type, key_order=Member.LEAD_ORDER,
    )  # fmt: skip
    config = TeamConfig(
        name=name, description=description, created_at=now, lead_agent_id=lead.agent_id,
        lead_session_id=lead_session_id, members=[lead],
    )  # fmt: skip
    config.lead_process = lead_process
    return config
