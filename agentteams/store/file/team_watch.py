"""Following whole teams (`agentteams watch`): a waiter that wakes on any change of the teams' files, and keeps
watching the directories that appear later (a team's inboxes, its agents, its tasks)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

from agentteams.errors import AgentTeamsError
from agentteams.store.fs.watch import FileWatcher
from agentteams.store.paths import Layout


class FileTeamsWatcher:
    """inotify on the teams' directories (every team's, or the config root until `teams/` exists); a directory
    that appeared or went since the last wait is news: the caller looks again, and the watch follows the new set."""

    def __init__(self, layout: Layout, teams: Sequence[str]) -> None:
        self.layout, self.teams = layout, list(teams)
        self._woken = threading.Event()
        self._watcher: FileWatcher | None = None
        self._watched: list[Path] = []
        self._rewatch()

    def _dirs(self) -> list[Path]:
        layout = self.layout
        wanted = [layout.teams_dir if layout.teams_dir.is_dir() else layout.root]
        for name in self.teams:
            team_dir = layout.team_dir(name)
            wanted += [team_dir, team_dir / "inboxes", team_dir / "agents", layout.task_dir(name)]
        return [d for d in wanted if d.is_dir()]

    def _rewatch(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
        self._watcher, self._watched = None, self._dirs()
        try:
            self._watcher = FileWatcher([], dirs=self._watched) if self._watched else None
        except AgentTeamsError:  # one vanished before it could be watched: the next wait tries again
            self._watched = []

    def wait(self, timeout: float | None = None, *, fds: Iterable[int] = ()) -> bool:
        if self._dirs() != self._watched:
            self._rewatch()
            return True
        if self._watcher is None:
            woken = self._woken.wait(timeout)
            self._woken.clear()
            return woken
        return self._watcher.wait(timeout, fds=fds)

    def wake(self) -> None:
        self._woken.set()
        if self._watcher is not None:
            self._watcher.wake()

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:  # fmt: skip
        self.close()
