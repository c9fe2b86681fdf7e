"""The file store: the store interface over the JSON files real Claude Code shares (`teams/`, `tasks/`), with
inotify waits on them. Parts load on first use, so a command that reads tasks pays for nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentteams.store.fs import safe_paths
from agentteams.store.paths import Layout, team_dir_name

if TYPE_CHECKING:
    from agentteams.store.file.changes import FileChanges
    from agentteams.store.file.mailbox import Mailbox
    from agentteams.store.file.nodes import FileNodes
    from agentteams.store.file.tasks import TaskStore
    from agentteams.store.file.team_watch import FileTeamsWatcher
    from agentteams.store.file.teams import TeamStore
    from agentteams.store.fs.watch import FileWatcher
    from agentteams.store.presence import Presence
    from agentteams.store.records import Envelope
    from agentteams.store.signing import Keyring


class FilePresences:
    """Presence records as `teams/<team>/agents/<agent>.json`."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout

    def write(self, team: str, agent: str, presence: Presence) -> None:
        from agentteams.store.presence import write_presence

        write_presence(self.layout, team, agent, presence)

    def read(self, team: str, agent: str) -> Presence | None:
        from agentteams.store.presence import read_presence

        return read_presence(self.layout, team, agent)

    def remove(self, team: str, agent: str) -> None:
        from agentteams.store.presence import remove_presence

        remove_presence(self.layout, team, agent)


class FileStore:
    """Teams, inboxes, tasks and presence under one config root (`$CLAUDE_CONFIG_DIR` by default)."""

    def __init__(self, layout: Layout | None = None) -> None:
        self.layout = layout or Layout.from_env()
        self._teams: TeamStore | None = None
        self._mail: Mailbox | None = None
        self._tasks: TaskStore | None = None
        self._presence = FilePresences(self.layout)
        self._keyring: Keyring | None = None

    @property
    def teams(self) -> TeamStore:
        if self._teams is None:
            from agentteams.store.file.teams import TeamStore

            self._teams = TeamStore(self.layout)
        return self._teams

    @property
    def mail(self) -> Mailbox:
        if self._mail is None:
            from agentteams.store.file.mailbox import Mailbox

            self._mail = Mailbox(self.layout, self.teams, self._seal)
        return self._mail

    @property
    def tasks(self) -> TaskStore:
        if self._tasks is None:
            from agentteams.store.file.tasks import TaskStore

            # the mailbox (for task_assignment messages, signed like every send) is got on first use, not here
            self._tasks = TaskStore(self.layout, lambda: self.mail)
        return self._tasks

    def _seal(self, team: str, recipient: str, env: Envelope) -> None:
        """The keyring's seal, the keyring (and the crypto it loads) made by the first send: a reader never needs it."""
        self.keyring.seal(team, recipient, env)

    @property
    def keyring(self) -> Keyring:
        """The signing keys of this process's agents: everything they write through this store is signed."""
        if self._keyring is None:
            from agentteams.store.signing import Keyring

            self._keyring = Keyring()
        return self._keyring

    @property
    def changes(self) -> FileChanges:
        from agentteams.store.file.changes import FileChanges

        return FileChanges(self.layout)

    @property
    def presence(self) -> FilePresences:
        return self._presence

    @property
    def nodes(self) -> FileNodes:
        from agentteams.store.file.nodes import FileNodes

        return FileNodes(self.layout)

    def canonical(self, team: str) -> str:
        return team_dir_name(team)

    def watch(self, team: str, agent: str, *, tasks: bool = False) -> FileWatcher:
        """Wakes on a change of the agent's inbox, and with `tasks` of any task file of the team."""
        from agentteams.store.fs.watch import FileWatcher

        inbox = self.mail.inbox_path(team, agent)
        safe_paths.make_dir(inbox.parent, parents=True)
        dirs = []
        if tasks:
            task_dir = self.layout.task_dir(self.teams.canonical(team))
            safe_paths.make_dir(task_dir, parents=True)
            dirs.append(task_dir)
        return FileWatcher([inbox], dirs=dirs)

    def steady(self) -> float:
        return float("inf")  # files are never away: no liveness verdict waits on them (store/outages.py)

    def connections(self) -> int:
        return 0

    def watch_teams(self, teams: Sequence[str]) -> FileTeamsWatcher:
        """Wakes on a change of any file of these teams (or of the teams directory: a team made or deleted)."""
        from agentteams.store.file.team_watch import FileTeamsWatcher

        return FileTeamsWatcher(self.layout, teams)
