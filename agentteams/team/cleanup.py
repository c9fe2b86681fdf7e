"""Cleanup of what dead agents leave behind: lead-less teams, dead members, orphaned panes, stale locks, temp files.

`plan` only looks; `apply` acts one step at a time and re-checks right before each step that no live agent is touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentteams.backends.tmux import PaneRecord, TmuxBackend
from agentteams.errors import AgentTeamsError, CorruptFileError, InvalidNameError, NotFoundError
from agentteams.store.api import Store
from agentteams.store.file.store import FileStore
from agentteams.store.fs import safe_paths
from agentteams.store.fs.locking import STALE_SECONDS, queue_file_for
from agentteams.store.opener import open_store
from agentteams.store.paths import Layout, team_dir_name
from agentteams.store.records import Member, TeamConfig
from agentteams.team.orphan_lists import DONE, orphan_lists, task_doc
from agentteams.tools.team import worktree_git

Kind = Literal["team", "member", "pane", "lock", "tmp"]
Outcome = Literal["planned", "done", "skipped", "failed"]
Verdict = tuple[bool | None, str]  # alive (None: no evidence either way), and why
TMP_STALE_SECONDS = 60.0  # an atomic write lives milliseconds; a minute-old temp file's writer died
_WHAT = {"team": "remove team", "member": "remove member", "pane": "kill pane", "lock": "remove stale lock",
         "tmp": "remove temp file"}  # fmt: skip
_DONE = {"remove": "removed", "kill": "killed"}


@dataclass
class Action:
    """One step of a cleanup: what, on which team, why; `outcome`/`detail` are filled in by `apply`."""

    kind: Kind
    target: str  # team name, member name, pane id, or a path relative to the config root
    team: str | None
    reason: str
    label: str = ""  # shown after the target, e.g. the agent a pane runs
    outcome: Outcome = "planned"
    detail: str = ""

    @property
    def what(self) -> str:
        where = f" from team {self.team}" if self.kind == "member" else ""
        label = f" ({self.label})" if self.label else ""
        return f"{_WHAT[self.kind]} {self.target}{label}{where}"

    def line(self) -> str:
        """`would remove ...: why` (planned), `removed ...: why` (done), `skipped: remove ...: why not`."""
        if self.outcome in ("skipped", "failed"):
            return f"{self.outcome}: {self.what}: {self.detail or self.reason}"
        verb, _, rest = self.what.partition(" ")
        head = f"would {self.what}" if self.outcome == "planned" else f"{_DONE[verb]} {rest}"
        return f"{head}: {self.reason}" + (f" ({self.detail})" if self.detail else "")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Plan:
    actions: list[Action] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class _Gone:
    """What is (to be) removed so far: a pane's fate depends on its team's and member's."""

    teams: set[str] = field(default_factory=set)
    members: set[str] = field(default_factory=set)  # agent ids
    panes: set[str] = field(default_factory=set)  # pane ids removed members had, even untagged ones


class PaneView:
    """The panes of one tmux server (AGENTTEAMS_TMUX_SOCKET, the server we run in, or the default one)."""

    def __init__(self, socket_path: str | None = None) -> None:
        self.backend = TmuxBackend(socket_path)
        self.name = self.backend.where

    def snapshot(self) -> dict[str, PaneRecord] | None:
        """Every pane on the server by id; None when no server answers (then panes say nothing)."""
        return self.backend.pane_map()

    def get(self, pane_id: str) -> PaneRecord | None:
        return self.backend.pane(pane_id)

    def kill(self, pane_id: str) -> None:
        self.backend.kill_pane(pane_id)


def live_agent_ids() -> set[str]:
    """The `--agent-id` of every running process: our teammates' launchers and real `claude` teammates alike.

    This sees agents on any tmux server (or none), so a pane missing from ours never condemns a live one."""
    ids: set[str] = set()
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            for i, arg in enumerate(argv):
                if arg == b"--agent-id" and i + 1 < len(argv):
                    ids.add(argv[i + 1].decode(errors="replace"))
                elif arg.startswith(b"--agent-id="):
                    ids.add(arg.partition(b"=")[2].decode(errors="replace"))
    return ids


class TeamCleanup:
    def __init__(self, layout: Layout | None = None, panes: PaneView | None = None, store: Store | None = None) -> None:
        self.layout = layout or Layout.from_env()
        self.store = store or open_store(self.layout)  # AGENTTEAMS_STORE's: the file store's locks and temp files
        self.teams, self.files = self.store.teams, isinstance(self.store, FileStore)  # are its own
        self.panes = panes

    def _member_verdict(
        self, team: str, member: Member, panes: dict[str, PaneRecord] | None, live: set[str]
    ) -> Verdict:
        if member.agent_id in live:
            return True, "its process is running"
        presence = self.store.presence.read(team, member.name)
        if presence is not None:
            if presence.liveness() in ("running", "unresponsive"):
                return True, f"its process {presence.pid} is running"
            return False, f"its process {presence.pid} is gone"
        pane_id = member.tmux_pane_id or ""
        if panes is None or member.backend_type not in (None, "tmux") or not pane_id[1:].isdigit():
            return None, "nothing says whether it runs"
        pane = panes.get(pane_id)
        if pane is None:
            return False, f"its pane {pane_id} is gone"
        return (False, f"its pane {pane_id} has exited") if pane.dead else (True, f"its pane {pane_id} is running")

    def _verdicts(self, config: TeamConfig, panes: dict[str, PaneRecord] | None, live: set[str]) -> dict[str, Verdict]:
        team = team_dir_name(config.name)
        lead = config.lead_agent_id
        return {m.name: self._member_verdict(team, m, panes, live) for m in config.members if m.agent_id != lead}

    def _team_dead(self, config: TeamConfig, verdicts: dict[str, Verdict]) -> str | None:
        """Why the whole team is dead, or None. A team with a running member is never dead."""
        if any(alive for alive, _ in verdicts.values()):
            return None
        lead = self.store.presence.read(team_dir_name(config.name), config.lead_name)
        if lead is not None:
            gone = lead.liveness() in ("exited", "dead")
            return f"its lead (process {lead.pid}) is gone and no member runs" if gone else None
        if verdicts and all(alive is False for alive, _ in verdicts.values()):
            return "no lead process on record and every member is dead"
        return None  # e.g. a team made with `agentteams team create`: nothing says it is abandoned

    def _open_tasks(self, team: str, member: Member) -> int:
        """Unfinished tasks owned by `member`, files read without the store: a dry run must not quarantine any."""
        if not self.files:
            tasks = self.store.tasks.list_tasks(team)
            return sum(t.owner in (member.name, member.agent_id) and t.status != "completed" for t in tasks)
        count = 0
        task_dir = self.layout.task_dir(team)
        for path in task_dir.glob("*.json") if task_dir.is_dir() else ():
            task = task_doc(path)
            count += task.get("owner") in (member.name, member.agent_id) and task.get("status") not in DONE
        return count

    def plan(self, only: str | None = None) -> Plan:
        """Everything a cleanup would do now; changes nothing."""
        only = team_dir_name(only) if only else None
        plan = Plan()
        panes = self._snapshot(plan.notes)
        live = live_agent_ids()
        gone = _Gone()
        for entry in self.teams.list_teams():
            if isinstance(entry, CorruptFileError):
                plan.notes.append(f"skipped a team whose config cannot be read: {entry}")
                continue
            team = team_dir_name(entry.name)
            if not only or team == only:
                plan.actions += self._plan_team(entry, panes, live, gone)
        for pane in sorted((panes or {}).values(), key=lambda p: int(p.pane_id[1:]) if p.pane_id[1:].isdigit() else 0):
            why = self._pane_reason(pane, live, gone, only)
            if why:
                plan.actions.append(Action("pane", pane.pane_id, _tag_team(pane.tag), why, label=pane.tag))
        plan.actions += self._file_actions(only, gone.teams)
        plan.notes += orphan_lists(self.layout, only, self.teams.present) if self.files else []
        return plan

    def _plan_team(
        self, config: TeamConfig, panes: dict[str, PaneRecord] | None, live: set[str], gone: _Gone
    ) -> list[Action]:
        team = team_dir_name(config.name)
        verdicts = self._verdicts(config, panes, live)
        why = self._team_dead(config, verdicts)
        dead = [m for m in config.members if m.name in verdicts and (why or verdicts[m.name][0] is False)]
        gone.panes.update(m.tmux_pane_id for m in dead if m.tmux_pane_id)
        if why:
            gone.teams.add(team)
            return [Action("team", team, team, why)]
        actions = []
        for m in dead:
            reason = verdicts[m.name][1]
            if n := self._open_tasks(team, m):
                reason += f"; {n} unfinished task(s) go back to pending"
            actions.append(Action("member", m.name, team, reason))
            gone.members.add(m.agent_id)
        return actions

    def _snapshot(self, notes: list[str] | None = None) -> dict[str, PaneRecord] | None:
        panes = self.panes.snapshot() if self.panes else None
        if self.panes and panes is None and notes is not None:
            notes.append(f"no tmux server answered on {self.panes.name}: panes were not checked")
        return panes

    def _pane_reason(self, pane: PaneRecord, live: set[str], gone: _Gone, only: str | None) -> str | None:
        """Why `pane` should be killed, or None. A pane whose agent process still runs is never killed."""
        team = _tag_team(pane.tag)
        if (only and team != only) or (pane.tag and pane.tag in live):
            return None
        if not pane.tag:  # ours only by its window, or by a removed member's record: only a dead one goes
            return "it has exited" if pane.dead and (pane.teammate_window or pane.pane_id in gone.panes) else None
        name = pane.tag.rpartition("@")[0]
        if team in gone.teams:
            return f"team {team} is removed"
        if team is None or not self.teams.present(team):
            return f"team {pane.tag.rpartition('@')[2]} no longer exists"
        if pane.tag in gone.members:
            return f"member {name} is removed"
        presence = self.store.presence.read(team, name)
        if presence is not None and presence.liveness() in ("running", "unresponsive"):
            return None
        try:
            member = self.teams.read(team).member(name)
        except AgentTeamsError:  # unreadable config: cannot tell whose pane this is
            return None
        if member is None:
            return f"{name} is no longer a member of team {team}"
        return "it has exited" if pane.dead else None

    def _file_actions(self, only: str | None, gone_teams: set[str]) -> list[Action]:
        """Stale lock dirs and temp files under teams/ and tasks/ (or one team's), but not in teams removed whole."""
        layout = self.layout
        if not self.files:
            return []  # no lock directories or temp files outside the file store
        tops = [layout.team_dir(only), layout.task_dir(only)] if only else [layout.teams_dir, layout.tasks_root]
        actions: list[Action] = []
        for dirpath, dirnames, filenames in (w for top in tops for w in os.walk(top)):  # os.walk never follows links
            for name in sorted(dirnames) + sorted(filenames):
                path = Path(dirpath) / name
                rel = path.relative_to(self.layout.root)
                try:
                    st = path.lstat()
                except FileNotFoundError:
                    continue
                age = time.time() - st.st_mtime
                if path.is_symlink() or (len(rel.parts) > 1 and rel.parts[1] in gone_teams):
                    continue
                if name in dirnames and name.endswith(".lock") and age > STALE_SECONDS:
                    why = f"untouched for {age:.0f}s (stale after {STALE_SECONDS:.0f}s)"
                    actions.append(Action("lock", str(rel), None, why))
                elif name in filenames and ".tmp." in name and age > TMP_STALE_SECONDS:
                    actions.append(Action("tmp", str(rel), None, f"left by an interrupted write {age:.0f}s ago"))
        return actions

    def apply(self, plan: Plan) -> None:
        """Carry out `plan` in order; each step re-checks its reason first and is skipped if it no longer holds."""
        gone = _Gone()
        steps = {"team": self._remove_team, "member": self._remove_member, "pane": self._kill_pane,
                 "lock": self._remove_lock, "tmp": self._remove_tmp}  # fmt: skip
        for action in plan.actions:
            try:
                action.detail = steps[action.kind](action, gone)
                action.outcome = "done"
            except _Skip as e:
                action.outcome, action.detail = "skipped", str(e)
            except (AgentTeamsError, OSError) as e:
                action.outcome, action.detail = "failed", str(e)

    def _remove_team(self, action: Action, gone: _Gone) -> str:
        try:
            config = self.teams.read(action.target)
        except (NotFoundError, CorruptFileError) as e:
            raise _Skip(str(e)) from None
        verdicts = self._verdicts(config, self._snapshot(), live_agent_ids())
        if self._team_dead(config, verdicts) is None:
            raise _Skip("it is alive again (a lead or member runs)")
        gone.panes.update(m.tmux_pane_id for m in config.members if m.tmux_pane_id and m.name in verdicts)
        _done, kept = worktree_git.close_team(self.teams, action.target, Path.cwd())  # clean worktrees go, dirty stay
        warnings = kept + self.teams.delete(action.target, force=True)
        gone.teams.add(action.target)
        return "; ".join(warnings)

    def _remove_member(self, action: Action, gone: _Gone) -> str:
        team = action.team or ""
        try:
            member = self.teams.read(team).member(action.target)
        except (NotFoundError, CorruptFileError) as e:
            raise _Skip(str(e)) from None
        if member is None:
            raise _Skip("it is no longer a member")
        alive, why = self._member_verdict(team, member, self._snapshot(), live_agent_ids())
        if alive is not False:
            raise _Skip(f"not dead now: {why}")
        moved = self.store.tasks.unassign_all(team, member.name, member.agent_id)
        self.teams.remove_member(team, member.name)
        self.store.presence.remove(team, member.name)
        gone.members.add(member.agent_id)
        if member.tmux_pane_id:
            gone.panes.add(member.tmux_pane_id)
        return f"unassigned {', '.join('#' + t.id for t in moved.tasks)}" if moved.tasks else ""

    def _kill_pane(self, action: Action, gone: _Gone) -> str:
        pane = self.panes.get(action.target) if self.panes else None
        if self.panes is None or pane is None:
            raise _Skip("the pane is already gone")
        if self._pane_reason(pane, live_agent_ids(), gone, None) is None:
            raise _Skip("its agent runs, or it belongs to a live member")
        self.panes.kill(pane.pane_id)
        return ""

    def _remove_lock(self, action: Action, gone: _Gone) -> str:
        lock_dir = self.layout.root / action.target
        queue = queue_file_for(lock_dir.with_name(lock_dir.name.removesuffix(".lock")))
        with _queue_probe(queue):  # excludes our own processes while we look and remove
            try:
                age = time.time() - lock_dir.stat().st_mtime
            except FileNotFoundError:
                raise _Skip("already removed") from None
            if age <= STALE_SECONDS:
                raise _Skip("it was refreshed: a holder is alive")
            lock_dir.rmdir()
        return ""

    def _remove_tmp(self, action: Action, gone: _Gone) -> str:
        path = self.layout.root / action.target
        with contextlib.suppress(FileNotFoundError):
            if time.time() - path.stat().st_mtime <= TMP_STALE_SECONDS:
                raise _Skip("it was written to again")
            path.unlink()
            return ""
        raise _Skip("already removed")


class _Skip(Exception):
    """A planned step whose reason no longer holds."""


@contextlib.contextmanager
def _queue_probe(queue: Path) -> Iterator[None]:
    """Hold our processes' queue lock for a lock target without waiting; skip when one of ours holds it.

    A plain non-blocking flock: locking's portalocker calls block, and portalocker takes this same flock."""
    try:
        fd = safe_paths.open_fd(queue, os.O_RDWR)  # never a planted link
    except FileNotFoundError:  # no process of ours ever queued here
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _Skip("one of our processes is waiting for or holding it") from None
        yield
    finally:
        os.close(fd)


def _tag_team(tag: str) -> str | None:
    """The team directory a pane tag (`name@team`) names, or None for a tag that names none."""
    name, _, team = tag.rpartition("@")
    with contextlib.suppress(InvalidNameError):
        return team_dir_name(team) if name and team else None
    return None
