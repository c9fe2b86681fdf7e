"""The team store: `teams/<team>/config.json` — create, read, members, flags, delete.

Every change is a locked read-modify-write of the config, so concurrent joins never lose a member.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from agentteams.errors import ConflictError, CorruptFileError, NotFoundError, UnsafePathError
from agentteams.pids import LeadProcess
from agentteams.store import safefs
from agentteams.store.api import NewMember
from agentteams.store.atomicjson import atomic_write_json, epoch_ms, parse_json_bytes, read_bytes
from agentteams.store.locking import ensure_file, locked, run_locked
from agentteams.store.paths import LEAD_NAME, Layout, agent_id, agent_name, inbox_key, team_dir_name, unique_name
from agentteams.store.records import COLORS, MAX_DEPARTED, Member, TeamConfig

__all__ = ["NewMember", "TeamStore", "next_color"]  # NewMember: the store interface's, kept importable here

T = TypeVar("T")


def next_color(config: TeamConfig) -> str:
    """First palette colour no current teammate uses; cycles by join count when all are taken."""
    used = {m.color for m in config.members if m.name != config.lead_name}
    for color in COLORS:
        if color not in used:
            return color
    return COLORS[(len(config.members) - 1) % len(COLORS)]


class TeamStore:
    def __init__(self, layout: Layout | None = None) -> None:
        self.layout = layout or Layout.from_env()
        self._seen: dict[Path, tuple[bytes, TeamConfig]] = {}  # peek's: each config's bytes and what they parsed to

    def canonical(self, team: str) -> str:
        return team_dir_name(team)

    def location(self, team: str) -> str:
        return str(self.layout.config_file(team))

    def exists(self, team: str) -> bool:
        return self.layout.config_file(team).exists()

    def present(self, team: str) -> bool:
        """Anything of the team is on disk, even with its config missing or damaged (or half deleted)."""
        return self.layout.team_dir(team).exists()

    def create(
        self,
        team: str,
        *,
        description: str | None = None,
        lead_session_id: str = "",
        lead_model: str | None = None,
        lead_agent_type: str = LEAD_NAME,
        cwd: str | None = None,
        lead_pane_id: str = "",
        lead_backend_type: str | None = None,
        lead_process: LeadProcess | None = None,
    ) -> TeamConfig:
        """Create a team; a name already taken gets `-2`, `-3`, ... (the directory is claimed by mkdir).

        With `lead_process` the config is 2.1.330's (`leadProcess` after `leadSessionId`), and so are its tasks' key
        order; without, 2.1.197's.
        """
        base = team_dir_name(team)
        safefs.make_dir(self.layout.teams_dir, parents=True)
        name, n = base, 1
        while True:
            try:
                os.mkdir(self.layout.team_dir(name), safefs.DIR_MODE)
                break
            except FileExistsError:
                n += 1
                name = f"{base}-{n}"
        config = new_config(name, description, lead_session_id, lead_model, lead_agent_type, cwd, lead_pane_id,
                            lead_backend_type, lead_process)  # fmt: skip
        safefs.make_dir(self.layout.inbox_dir(name))
        run_locked(
            self.layout.config_file(name), lambda: atomic_write_json(self.layout.config_file(name), config.to_json())
        )
        task_dir = self.layout.task_dir(name)
        safefs.make_dir(task_dir, parents=True)
        ensure_file(self.layout.task_lock_target(name), b"")
        return config

    def read(self, team: str) -> TeamConfig:
        path = self.layout.config_file(team)
        try:
            return self._read(team, path)
        except CorruptFileError:
            # a real `claude` rewrites the config in place (under the lock): a read may catch it mid-write
            with locked(path):
                return self._read(team, path)

    def peek(self, team: str) -> TeamConfig:
        """The config as `read` gives it, one object shared while the file holds the same bytes: for the hot paths
        that only look at it (a send resolving its recipient, a woken teammate), which read it cold, where its
        parse is most of a read (~0.4 ms). Never change what it returns."""
        path = self.layout.config_file(team)
        raw = read_bytes(path)
        seen = self._seen.get(path)
        if seen is not None and raw == seen[0]:
            return seen[1]
        try:
            config = self._parse(team, path, raw)
        except CorruptFileError:
            return self.read(team)  # caught mid-write by a real `claude`: read under the lock, not kept
        if raw is not None:  # always, once parsed
            self._seen[path] = (raw, config)
        return config

    @classmethod
    def _read(cls, team: str, path: Path) -> TeamConfig:
        return cls._parse(team, path, read_bytes(path))

    @staticmethod
    def _parse(team: str, path: Path, raw: bytes | None) -> TeamConfig:
        if raw is None:
            raise NotFoundError(f"no team named {team!r} (no {path})")
        try:
            return TeamConfig.from_json(parse_json_bytes(raw, path), str(path))
        except CorruptFileError as e:
            hint = "the file was left as it is: fix it, or delete the team with --force"
            raise CorruptFileError(f"{e}; {hint}") from e

    def list_teams(self) -> list[TeamConfig | CorruptFileError]:
        """Every team, in name order; an unreadable config is listed as its error, never dropped."""
        if not self.layout.teams_dir.is_dir():
            return []
        out: list[TeamConfig | CorruptFileError] = []
        for d in sorted(self.layout.teams_dir.iterdir()):
            if not (d / "config.json").exists():
                continue
            try:
                out.append(self.read(d.name))
            except CorruptFileError as e:
                out.append(e)
            except UnsafePathError as e:  # a planted link: listed as unreadable, like a damaged config
                out.append(CorruptFileError(str(e)))
            except NotFoundError:  # a folder no team name maps to (neither Claude Code nor we would name it so)
                out.append(CorruptFileError(f"{d}: not a team's folder (a team of that name lives in "
                                            f"{self.layout.team_dir(d.name).name}/); left alone"))  # fmt: skip
        return out

    def update(self, team: str, change: Callable[[TeamConfig], T], *, write_if: Callable[[T], bool] | None = None) -> T:
        """Apply `change` to the config under its lock and write it back (unless `write_if` says no to what
        `change` returned); returns what `change` returns."""
        path = self.layout.config_file(team)
        if not path.parent.is_dir():
            raise NotFoundError(f"no team named {team!r} (no {path.parent})")

        def rmw() -> T:
            config = self._read(team, path)
            result = change(config)
            if write_if is None or write_if(result):
                atomic_write_json(path, config.to_json())
            return result

        return run_locked(path, rmw)

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

    def delete(self, team: str, *, force: bool = False) -> list[str]:
        """Remove the team dir and its task dir; refuses while teammates remain. (Teammates' worktrees are the
        caller's: tools/teamgit.py removes the clean ones first.)

        Returns warnings about anything that could not be removed.
        """
        team_dir = self.layout.team_dir(team)
        if not team_dir.is_dir():
            raise NotFoundError(f"no team named {team!r} (no {team_dir})")
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
        _remove_tree(team_dir)
        _remove_tree(self.layout.task_dir(team_dir.name))
        return []


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


def _remove_tree(path: Path, attempts: int = 20) -> None:
    """rmtree that outlasts a departing agent's last write (a file appearing mid-removal: ENOTEMPTY)."""
    for attempt in range(attempts):
        try:
            shutil.rmtree(path)
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if e.errno != errno.ENOTEMPTY or attempt == attempts - 1:
                raise
            time.sleep(0.05)


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
