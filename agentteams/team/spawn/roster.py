"""The lead's roster of its teammates: their handles, the names it is starting now, and whether a member of the
config is live, so a spawn of a live name (a retried or repeated Task call) returns that member instead of another;
a member leaving (released) or started again (relaunched)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.store.api import NewMember, Store, Teams
from agentteams.store.records import Member, Task
from agentteams.team.spawn.base import Handle

if TYPE_CHECKING:
    from agentteams.agent.hooks.points import HookPoints
    from agentteams.team.spawn.base import Spawner


class Roster:
    """Handles by name (the lead's own dict, shared) plus the reservations of spawns under way."""

    def __init__(self, store: Store, spawner: Spawner, handles: dict[str, Handle] | None = None) -> None:
        self.store = store
        self.spawner = spawner
        self.handles: dict[str, Handle] = {} if handles is None else handles
        self._starting: set[str] = set()  # reserved in the config, not yet started: live to a second spawn
        self._lock = threading.Lock()  # the in-process half of check-and-reserve; the config lock is the other

    def reserve(self, team: str, new: NewMember) -> tuple[Member, bool]:
        """The member `new` names: a new one reserved for starting (True), or the live one holding its name (False)."""
        with self._lock:
            member, added = self.store.teams.add_member_once(team, new, lambda m: self.live(team, m))
            if added:
                self._starting.add(member.name)
        return member, added

    def started(self, name: str, handle: Handle) -> None:
        self.handles[name] = handle
        self._starting.discard(name)

    def present(self, name: str) -> bool:
        """A teammate started here, or being started: one quick enough to report idle before its start returned is
        one of ours already."""
        return name in self.handles or name in self._starting

    def abandoned(self, name: str) -> None:
        """A reserved start that failed (its entry is removed by the caller)."""
        self._starting.discard(name)

    def live(self, team: str, member: Member) -> bool:
        """Whether `member` runs: being started here, its process or thread (a real `claude`: its pane) if we started
        it, else its presence record (running, or silent but not dead), else the pane the config names."""
        if member.name in self._starting:
            return True
        handle = self.handles.get(member.name)
        if handle is not None:
            return self.spawner.alive(handle, team)
        presence = self.store.presence.read(team, member.name)
        if presence is not None and presence.pane_id in ("", member.tmux_pane_id):  # not an earlier one's record
            return presence.liveness() in ("running", "unresponsive")
        if member.tmux_pane_id and self.spawner.backend == "tmux":
            return self.spawner.alive(Handle(member.name, "tmux", pane_id=member.tmux_pane_id), team)
        return False


@dataclass
class Released:
    """What a member's departure did: the tasks that went back to pending, and what became of its worktree."""

    tasks: list[Task]
    note: str = ""  # a sentence for the lead's notice ("" without a worktree)


def release_member(
    store: Store, team: str, name: str, *, died: bool = False, hooks: HookPoints | None = None
) -> Released:
    """A member that left or died: its unfinished tasks pending again, its presence record gone, its entry gone
    (kept aside when it died, so that it can be resumed with its conversation, in its worktree, kept too)."""
    from agentteams.team.spawn import worktrees

    member = None
    with contextlib.suppress(AgentTeamsError):
        member = store.teams.read(team).member(name)
    moved = store.tasks.unassign_all(team, name, member.agent_id if member else None)
    try:
        store.teams.depart_member(team, name) if died else store.teams.remove_member(team, name)
    except AgentTeamsError as e:  # said: a member left in the config keeps TeamDelete refusing, and why must show
        diagnostics.warning("could not take %s out of team %s: %s", name, team, e)
    store.presence.remove(team, name)
    note = worktrees.release(store, hooks, team, member) if hooks is not None and not died else ""
    return Released(moved.tasks, note)


def relaunch_member(teams: Teams, team: str, member: Member, start: Callable[[], Handle]) -> Handle:
    """`member` (dead, or resumed) started again by `start()`: marked active before it runs, since from then on only
    it says (see spawning.spawn_member), and as it was if the start fails; its new pane recorded."""
    teams.set_active(team, member.name, True)
    try:
        handle = start()
    except Exception:
        teams.set_member_fields(team, member.name, is_active=member.is_active)  # not running after all
        raise
    teams.set_member_fields(team, member.name, tmux_pane_id=handle.pane_id)
    return handle
