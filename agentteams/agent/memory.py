"""Claude Code's memory files (CLAUDE.md and friends): which are read, in what order, with their `@path` imports.

The one reader of memory files. Every read is bounded; nothing here reads a file it was not pointed at.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentteams import diagnostics

Kind = Literal["user", "project", "local"]

MAX_DEPTH = 5  # a memory file is depth 0; an import at depth 5 is not read (Claude Code 2.1.330 reads 4 hops deep)
MAX_FILE_BYTES = 100_000  # per file; a longer one is cut (an import may name any file, even a huge log)
MAX_TOTAL_BYTES = 400_000  # all files together: past this nothing more is read
MAX_FILES = 100  # an import fan-out cannot make a session read thousands of files

PROJECT_NAMES: tuple[tuple[str, Kind], ...] = (
    ("CLAUDE.md", "project"),
    (os.path.join(".claude", "CLAUDE.md"), "project"),
    ("CLAUDE.local.md", "local"),
)  # per directory, in Claude Code's order

DESCRIPTIONS: dict[Kind, str] = {
    "user": "the user's own instructions, for every project",
    "project": "the project's shared instructions, kept in the repository",
    "local": "the user's private instructions for this project, not in the repository",
}

# `@path` after the start of a line or whitespace (so `me@host` is no import); `\ ` escapes a space in a path
IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)


@dataclass(frozen=True)
class MemoryFile:
    path: Path
    kind: Kind
    text: str
    size: int  # bytes on disk
    truncated: bool = False
    imported_by: Path | None = None


@dataclass(frozen=True)
class Memory:
    """What a session loaded, in the order the model sees it."""

    files: tuple[MemoryFile, ...] = ()
    withheld: tuple[Path, ...] = ()  # project imports outside the cwd: Claude Code loads those only once approved

    def prompt_text(self) -> str | None:
        """The block that goes before the conversation's first user message (None when there is no memory)."""
        shown = [f for f in self.files if f.text.strip()]
        if not shown:
            return None
        parts = [
            "<memory-files>",
            "Standing instructions from the user's and the project's memory files (CLAUDE.md) follow, each under "
            "its path. Follow them: where they differ from your usual way of working, they win.",
        ]
        for f in shown:
            cut = " — cut at the size limit" if f.truncated else ""
            parts.append(f"## {f.path} ({DESCRIPTIONS[f.kind]}{cut})\n\n{f.text.strip()}")
        parts.append("</memory-files>")
        return "\n\n".join(parts)


def project_dirs(cwd: Path) -> list[Path]:
    """The directories whose memory files count, outermost first: every ancestor of `cwd` below `/`, and `cwd`.

    Claude Code walks up to the filesystem root (not stopping at a git root: it reads a CLAUDE.md above the
    repository too), and reads the outermost first so the nearest, most specific file comes last.
    """
    here = Path(os.path.abspath(cwd))
    dirs = [d for d in (here, *here.parents) if d != Path(d.anchor)]
    return dirs[::-1]


def strip_code(text: str) -> str:
    """`text` without fenced code blocks and inline code spans, where Claude Code evaluates no import."""
    kept: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        opening = FENCE.match(line) if "```" in line or "~~~" in line else None  # most lines: no regex at all
        if fence is None and opening:
            fence = opening.group(1)
        elif fence is not None:
            closing = opening is not None and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence)
            if closing and not line.strip().strip(fence[0]):  # a closing fence has nothing after its backticks
                fence = None
        else:
            kept.append(SPAN.sub(" ", line) if "`" in line else line)
    return "\n".join(kept)


def import_targets(text: str) -> list[str]:
    """The `@path` imports of a memory file's text, in order, each once (code spans and blocks skipped)."""
    found: list[str] = []
    if "@" not in text:  # the common case, and the cheapest
        return found
    for match in IMPORT.finditer(strip_code(text)):
        raw = match.group(1).replace("\\ ", " ")
        if _looks_like_path(raw) and raw not in found:
            found.append(raw)
    return found


def _looks_like_path(raw: str) -> bool:
    """A path Claude Code would try: relative, `~/`, or absolute; not a bare `@`, `@/` or a mention like `@@x`."""
    if raw in ("/", "~") or raw.startswith("@"):
        return False
    return raw.startswith(("./", "../", "~/", "/")) or bool(re.match(r"[\w.-]", raw))


def resolve_import(raw: str, importer: Path) -> Path:
    """Where an import points: `~` is the home directory, a relative path is relative to the importing file."""
    path = Path(os.path.expanduser(raw)) if raw.startswith("~") else Path(raw)
    if not path.is_absolute():
        path = importer.parent / path
    return Path(os.path.normpath(path))


def _within(path: Path, root: Path) -> bool:
    """`path` is below `root` as written and once symlinks are followed (a checked-in link may point anywhere)."""
    real, real_root = os.path.realpath(path), os.path.realpath(root)
    return (os.path.commonpath([str(path), str(root)]) == str(root)
            and os.path.commonpath([real, real_root]) == real_root)  # fmt: skip


class _Reader:
    """One collection pass: bounded reads, each real file once, imports depth-first right after their importer."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = Path(os.path.normpath(os.path.abspath(cwd)))
        self.files: list[MemoryFile] = []
        self.withheld: list[Path] = []
        self.seen: set[tuple[int, int]] = set()
        self.total = 0
        self.full = False

    def add(self, path: Path, kind: Kind, depth: int = 0, importer: Path | None = None) -> None:
        if depth >= MAX_DEPTH or self.full:
            return
        try:
            info = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):  # most names tried do not exist; a missing import is quiet
            return
        except OSError as e:
            diagnostics.warning("memory: cannot read %s: %s", path, e.strerror or e)
            return
        real = (info.st_dev, info.st_ino)  # one stat, where realpath costs one per path component
        if real in self.seen:  # a cycle, or a file reached twice (the user file is also ~/.claude/CLAUDE.md)
            return
        if len(self.files) >= MAX_FILES or self.total >= MAX_TOTAL_BYTES:
            self.full = True  # warned once, naming the first file really left out (the stat above found it)
            diagnostics.warning("memory: more than %d files or %d bytes; %s and later ones not read",
                                MAX_FILES, MAX_TOTAL_BYTES, path)  # fmt: skip
            return
        got = read_bounded(path, min(MAX_FILE_BYTES, MAX_TOTAL_BYTES - self.total))
        if got is None:
            return
        self.seen.add(real)
        text, size, truncated = got
        self.total += len(text.encode("utf-8"))
        self.files.append(MemoryFile(path, kind, text, size, truncated, importer))
        for raw in import_targets(text):
            target = resolve_import(raw, path)
            if kind != "user" and not _within(target, self.cwd):
                # Claude Code withholds a project file's import from outside the cwd until the user approves it
                # in a dialog we do not have: a checked-in CLAUDE.md must not pull in ~/.ssh or /etc by itself
                if target not in self.withheld and os.path.isfile(target):
                    self.withheld.append(target)
                continue
            self.add(target, kind, depth + 1, path)


def read_bounded(path: Path, limit: int) -> tuple[str, int, bool] | None:
    """(text, size on disk, cut) of a regular text file, at most `limit` bytes read; None when it is missing
    (quietly, as Claude Code skips a missing import), not a regular file or binary; one warning if unreadable."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            data = os.read(fd, limit + 1)
        finally:
            os.close(fd)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        diagnostics.warning("memory: cannot read %s: %s", path, e.strerror or e)
        return None
    if b"\0" in data[:8192]:  # an import of a binary file adds nothing the model can use
        return None
    truncated = len(data) > limit
    text = data[:limit].decode("utf-8", errors="replace")
    return text, info.st_size, truncated


def load_memory(cwd: Path, config_dir: Path) -> Memory:
    """Every memory file for a session in `cwd`, in Claude Code's order: the user's `CLAUDE.md` in the config
    root, then for each directory from the outermost down to `cwd`: `CLAUDE.md`, `.claude/CLAUDE.md`,
    `CLAUDE.local.md`; each followed by what it imports."""
    reader = _Reader(cwd)
    if os.environ.get("CLAUDE_CODE_SIMPLE") or os.environ.get("CLAUDE_CODE_SAFE_MODE"):  # --bare, --safe-mode
        return Memory((), ())
    reader.add(Path(os.path.abspath(config_dir)) / "CLAUDE.md", "user")
    for directory in project_dirs(reader.cwd):
        for name, kind in PROJECT_NAMES:
            reader.add(directory / name, kind)
    return Memory(tuple(reader.files), tuple(reader.withheld))


def describe(memory: Memory) -> list[str]:
    """One line per loaded file (path, size, kind, importer) and per withheld import: what `/memory` prints."""
    if not memory.files and not memory.withheld:
        return ["No memory files loaded (CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, or the user's CLAUDE.md)."]
    lines = []
    for f in memory.files:
        via = f" · imported by {f.imported_by}" if f.imported_by else ""
        cut = f" · cut to {_size(len(f.text.encode('utf-8')))}" if f.truncated else ""
        lines.append(f"{f.path} · {_size(f.size)} · {f.kind}{via}{cut}")
    for path in memory.withheld:
        lines.append(f"{path} · not loaded: imported from outside the working directory")
    return lines


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"
