"""File checkpoints for an SDK program that enables them: each tracked file's content as each user prompt came, kept in
memory, and `rewind_files` putting the files back as they were at a prompt (Claude Code's answers and wording)."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentteams.errors import AgentTeamsError, UnsafePathError
from agentteams.store.fs.safe_paths import check_dirs, open_fd, read_bytes, write_all

ENV = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"  # the Agent SDKs set it for enable_file_checkpointing
NOT_FOUND = "No file checkpoint found for this message."
Content = bytes | None  # a file's bytes; None: it did not exist


def for_session(roots: list[Path], environ: Mapping[str, str]) -> FileCheckpoints | None:
    """The session's checkpoints when its program enabled them (the SDKs' environment variable), else None."""
    if environ.get(ENV, "").strip().lower() not in ("1", "true", "yes", "on"):
        return None
    return FileCheckpoints([Path(os.path.realpath(r)) for r in roots])  # the file tools' paths are resolved too


@dataclass
class Restore:
    """One tracked file a rewind would change: where it is, what it holds now, what it goes back to."""

    path: Path
    now: Content
    then: Content


@dataclass
class FileCheckpoints:
    """The files the session's file tools changed, inside its working directories (`roots`), and their content at each
    user prompt. A file first changed after a prompt held, at that prompt, what it held before that first change."""

    roots: list[Path]
    order: list[Path] = field(default_factory=list)  # tracked files, first changed first (rewind lists them so)
    origin: dict[Path, Content] = field(default_factory=dict)  # what each held before a tool first changed it
    at: dict[str, dict[Path, Content]] = field(default_factory=dict)  # prompt uuid -> tracked files' content then

    def snapshot(self, message_id: str) -> None:
        """A user prompt (its transcript entry's uuid): the tracked files as they are now, a command's changes too."""
        self.at[message_id] = {path: self._read(path) for path in self.order}

    def before_change(self, path: Path) -> None:
        """A file tool is about to change `path`: its content now, the first time (a file outside the working
        directories, or reached through a link, is never tracked, so never rewound)."""
        path = Path(os.path.abspath(path))
        if path in self.origin or self._root(path) is None:
            return
        try:
            content = self._read(path)
        except (UnsafePathError, OSError):
            return
        self.origin[path] = content
        self.order.append(path)

    def rewind(self, message_id: str, *, dry_run: bool) -> dict[str, Any]:
        """The answer to `rewind_files`: a dry run's count of what would change; otherwise the files put back."""
        if message_id not in self.at:
            if dry_run:
                return {"canRewind": False, "error": NOT_FOUND}
            raise AgentTeamsError(NOT_FOUND)
        changes, links = self._changes(message_id)
        if dry_run:
            insertions = deletions = 0
            for change in changes:
                added, removed = line_counts(change.now, change.then)
                insertions, deletions = insertions + added, deletions + removed
            return {"canRewind": True, "filesChanged": [str(c.path) for c in changes], "insertions": insertions,
                    "deletions": deletions}  # fmt: skip
        for change in changes:
            try:
                self._restore(change)
            except UnsafePathError:  # a directory became a link since the look: nothing written through it
                links += 1
        return {"canRewind": True, "skippedLinks": links}

    def _changes(self, message_id: str) -> tuple[list[Restore], int]:
        then, changes, links = self.at[message_id], [], 0
        for path in self.order:
            target = then[path] if path in then else self.origin[path]
            try:
                now = self._read(path)
            except UnsafePathError:
                links += 1
                continue
            if now != target:
                changes.append(Restore(path, now, target))
        return changes, links

    def _root(self, path: Path) -> Path | None:
        return next((r for r in self.roots if path == r or path.is_relative_to(r)), None)

    def _read(self, path: Path) -> Content:
        """The file's bytes, None if absent; UnsafePathError when it, or a directory between it and its working
        directory, is a symbolic link."""
        root = self._root(path)
        if root is None:
            raise UnsafePathError(f"refusing {path}: outside the working directories")
        check_dirs(str(root), str(path.parent))
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                raise UnsafePathError(f"refusing {path}: it is a symbolic link")
        except (FileNotFoundError, NotADirectoryError):
            return None
        return read_bytes(path)

    def _restore(self, change: Restore) -> None:
        root = self._root(change.path)
        assert root is not None  # only tracked files, all inside
        check_dirs(str(root), str(change.path.parent))
        if change.then is None:
            if change.now is not None:
                change.path.unlink(missing_ok=True)
            return
        change.path.parent.mkdir(parents=True, exist_ok=True)  # a command may have removed its directory
        check_dirs(str(root), str(change.path.parent))
        fd = open_fd(change.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # the umask decides, as for a Write
        try:
            write_all(fd, change.then)
        finally:
            os.close(fd)


def line_counts(now: Content, then: Content) -> tuple[int, int]:
    """The lines a rewind adds and removes going from `now` to `then` (an absent file has none)."""
    import difflib  # ~1 ms: loaded when a rewind is weighed, not at every session's start

    old = (now or b"").decode("utf-8", "replace").splitlines()
    new = (then or b"").decode("utf-8", "replace").splitlines()
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            removed, added = removed + i2 - i1, added + j2 - j1
    return added, removed
