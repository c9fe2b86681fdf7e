"""The file mirror: this machine's copy of teams kept in another store (Redis), in Claude Code's layout
(`teams/<team>/config.json`, `inboxes/<agent>.json`, `tasks/<team>/<id>.json`) for local monitors and tools that
read it. One way only: the source wins, and a team of the same name made here by anyone else is never touched."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError, CorruptFileError
from agentteams.store.api import Store
from agentteams.store.fs.atomic_json import atomic_write_bytes, dump_json, encode, read_bytes
from agentteams.store.paths import Layout
from agentteams.store.records import TeamConfig

MARK = ".agentteams-mirror"  # in each directory the mirror made: only those are ever rewritten or removed


@dataclass
class Synced:
    """What one pass changed: files written (their content differed), files removed, teams left alone."""

    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


class Mirror:
    """Copies every team of `source` (or the named ones) under `layout`, writing only files whose content changed
    (a local watcher wakes once per real change) and removing what the source no longer has."""

    def __init__(self, source: Store, layout: Layout, teams: Iterable[str] = ()) -> None:
        self.source, self.layout = source, layout
        self.only = {source.teams.canonical(t) for t in teams}
        self._warned: set[str] = set()

    def sync(self) -> Synced:
        done = Synced()
        live: set[str] = set()
        for config in self.wanted():
            live.add(config.name)
            if self._ours(config.name, done):
                self._team(config, done)
        for name in self._mirrored() - live:  # gone from the source: its copy goes too
            self._drop(name, done)
        return done

    def wanted(self) -> list[TeamConfig]:
        """The source's teams this mirror copies (an unreadable config is the source's to report)."""
        found = self.source.teams.list_teams()
        return [c for c in found if not isinstance(c, CorruptFileError) and (not self.only or c.name in self.only)]

    def _ours(self, team: str, done: Synced) -> bool:
        """The team's directories are the mirror's (made now, or marked by it before); else left alone, once said."""
        dirs = (self.layout.team_dir(team), self.layout.task_dir(team))
        if any(d.exists() and not (d / MARK).exists() for d in dirs):
            done.refused.append(team)
            self._warn_once(team, f"mirror: team {team} already exists in {self.layout.root} and is not a mirror: "
                                  "left alone")  # fmt: skip
            return False
        for d in dirs:
            d.mkdir(parents=True, exist_ok=True)
            (d / MARK).touch()
        return True

    def _warn_once(self, what: str, line: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            diagnostics.warning("%s", line)

    def _team(self, config: TeamConfig, done: Synced) -> None:
        team = config.name
        self._put(self.layout.config_file(team), config.to_json(), done)
        inboxes = self.layout.inbox_dir(team)
        inboxes.mkdir(exist_ok=True)
        owners = set()
        for owner in self.source.mail.inbox_owners(team):
            try:
                path = self.layout.inbox_file(team, owner)
            except AgentTeamsError as e:  # a name no file may have here: that inbox is not copied, and said once
                self._warn_once(f"{team}/{owner}", f"mirror: inbox {owner!r} of team {team} not copied: {e}")
                continue
            owners.add(path.name)
            self._put(path, [e.to_json() for e in self.source.mail.read_live(team, owner)], done)
        self._prune(inboxes, owners, done)
        ids = set()
        for task in self.source.tasks.list_tasks(team):
            path = self.layout.task_file(team, task.id)
            ids.add(path.name)
            self._put(path, task.to_json(), done)
        self._prune(self.layout.task_dir(team), ids, done)

    def _put(self, path: Path, obj: object, done: Synced) -> None:
        data = encode(dump_json(obj))
        if read_bytes(path) != data:
            atomic_write_bytes(path, data)
            done.written.append(path)

    def _prune(self, directory: Path, keep: set[str], done: Synced) -> None:
        for path in directory.glob("*.json"):
            if path.name not in keep:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    done.removed.append(path)

    def _mirrored(self) -> set[str]:
        root = self.layout.teams_dir
        names = {p.parent.name for p in root.glob(f"*/{MARK}")} if root.is_dir() else set()
        return {n for n in names if not self.only or n in self.only}

    def _drop(self, team: str, done: Synced) -> None:
        for directory in (self.layout.team_dir(team), self.layout.task_dir(team)):
            if not (directory / MARK).exists():
                continue
            for path in sorted(directory.rglob("*"), reverse=True):  # files first, then their directories
                with contextlib.suppress(OSError):
                    if path.is_dir() and not path.is_symlink():
                        path.rmdir()
                    else:
                        path.unlink()
            with contextlib.suppress(OSError):
                os.rmdir(directory)
            done.removed.append(directory)


Wait = Callable[[float], bool]  # waits up to that many seconds (for news); False once the mirror is to stop


def run(mirror: Mirror, arm: Callable[[], Wait], idle: Wait, interval: float) -> None:
    """Copy, then wait for news at most `interval` seconds, until told to stop. `arm` makes the wait before each
    copy, so nothing written meanwhile is missed; `idle` waits while the store is down: one warning per outage, and
    the copy stays as it was until the store answers again."""
    down = False
    while True:
        wait = idle
        try:
            wait = arm()
            mirror.sync()
            if down:
                diagnostics.warning("mirror: the store answers again")
            down = False
        except Exception as e:  # the Redis client's own errors too: a watcher outlives an outage
            if not down:
                diagnostics.warning("mirror: %s; the copy stays as it was until the store answers", e)
            down, wait = True, idle
        if not wait(interval):
            return
