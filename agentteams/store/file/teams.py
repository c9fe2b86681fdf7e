"""The team store: `teams/<team>/config.json` — create, read, members, flags, delete.

Every change is a locked read-modify-write of the config, so concurrent joins never lose a member.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from agentteams.errors import CorruptFileError, NotFoundError, UnsafePathError
from agentteams.pids import LeadProcess
from agentteams.store.api import NewMember
from agentteams.store.file import task_files
from agentteams.store.fs import safe_paths
from agentteams.store.fs.atomic_json import atomic_write_json, parse_json_bytes, read_bytes
from agentteams.store.fs.locking import ensure_file, locked, run_locked
from agentteams.store.membership import Membership, new_config, next_color
from agentteams.store.paths import LEAD_NAME, Layout, team_dir_name
from agentteams.store.records import TeamConfig

__all__ = ["NewMember", "TeamStore", "new_config", "next_color"]  # the shared rules', importable here too

T = TypeVar("T")


class TeamStore(Membership):
    """Team configs as files (`teams/<team>/config.json`), each change under the config's lock."""

    def __init__(self, layout: Layout | None = None) -> None:
        self.layout = layout or Layout.from_env()
        self._seen: dict[Path, tuple[bytes, TeamConfig]] = {}  # peek's: each config's bytes and what they parsed to

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
        safe_paths.make_dir(self.layout.teams_dir, parents=True)
        name, n = base, 1
        while True:
            try:
                os.mkdir(self.layout.team_dir(name), safe_paths.DIR_MODE)
                if not self._orphan_tasks(name):
                    break
                # a task list its team left behind (a crash between the two removals): a new team never inherits
                # another's tasks, so the name counts as taken
                os.rmdir(self.layout.team_dir(name))
            except FileExistsError:
                pass
            n += 1
            name = f"{base}-{n}"
        config = new_config(name, description, lead_session_id, lead_model, lead_agent_type, cwd, lead_pane_id,
                            lead_backend_type, lead_process)  # fmt: skip
        safe_paths.make_dir(self.layout.inbox_dir(name))
        run_locked(
            self.layout.config_file(name), lambda: atomic_write_json(self.layout.config_file(name), config.to_json())
        )
        task_dir = self.layout.task_dir(name)
        safe_paths.make_dir(task_dir, parents=True)
        ensure_file(self.layout.task_lock_target(name), b"")
        return config

    def _orphan_tasks(self, name: str) -> bool:
        try:
            return bool(task_files.task_ids(os.listdir(self.layout.task_dir(name))))
        except FileNotFoundError:
            return False

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

    def delete(self, team: str, *, force: bool = False) -> list[str]:
        """Remove the team dir and its task dir; refuses while teammates remain. (Teammates' worktrees are the
        caller's: tools/team/worktree_git.py removes the clean ones first.)

        Returns warnings about anything that could not be removed.
        """
        team_dir = self.layout.team_dir(team)
        if not team_dir.is_dir():
            raise NotFoundError(f"no team named {team!r} (no {team_dir})")
        self.refuse_delete(team, force)  # members left, or a config that does not read: only with force
        _remove_tree(team_dir)
        _remove_tree(self.layout.task_dir(team_dir.name))
        return []


def _remove_tree(path: Path, attempts: int = 20) -> None:
    """rmtree that outlasts a departing agent's last writes: an entry that vanishes mid-walk (the temporary file
    of an atomic write, renamed into place) is passed over, and a file appearing mid-removal (ENOTEMPTY) is
    caught by walking again, until `path` itself is gone."""
    import shutil  # (with bz2 and lzma) loaded by a team's removal, not by every session's start

    for attempt in range(attempts):
        try:
            shutil.rmtree(path, onerror=_pass_over_vanished)
        except OSError as e:
            if e.errno != errno.ENOTEMPTY or attempt == attempts - 1:
                raise
        if not os.path.lexists(path):
            return
        time.sleep(0.05)
    raise OSError(errno.ENOTEMPTY, "kept being written to while it was removed", str(path))


def _pass_over_vanished(func: Callable[..., object], name: str, exc_info: tuple[object, BaseException, object]) -> None:
    """rmtree's error hook: an entry (or the tree) already gone is what we wanted; anything else is raised."""
    error = exc_info[1]
    if not isinstance(error, FileNotFoundError):
        raise error
