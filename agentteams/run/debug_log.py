"""`-d/--debug [filter]`, `--debug-file PATH` and `--debug-to-stderr`: the debug log as Claude Code 2.1.332 keeps it,
timestamped `[DEBUG]` lines in `$CLAUDE_CONFIG_DIR/debug/<session>.txt` (and `debug/latest` linked to it), in the
file named, or on stderr; a filter keeps some categories (`hooks,mcp`) or drops them (`!hooks,!mcp`)."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from agentteams import diagnostics
from agentteams.inert_text import inert
from agentteams.store.fs.safe_paths import DIR_MODE, FILE_MODE


@dataclass(frozen=True)
class Filter:
    """Categories kept (`include`) or dropped (`exclude`); a mix of both is no filter at all, as claude reads it."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def keeps(self, message: str) -> bool:
        if not self.include and not self.exclude:
            return True
        found = categories(message)
        if self.exclude:
            return not any(c in self.exclude for c in found)
        return any(c in self.include for c in found)


def parse_filter(text: str | None) -> Filter:
    words = [w.strip() for w in (text or "").split(",") if w.strip()]
    negated = [w for w in words if w.startswith("!")]
    if not words or (negated and len(negated) != len(words)):
        return Filter()
    names = tuple(w.lstrip("!").lower() for w in words)
    return Filter(exclude=names) if negated else Filter(include=names)


_MCP = re.compile(r"^MCP server [\"']([^\"']+)[\"']")
_PREFIX = re.compile(r"^([^:\[]+):")
_BRACKET = re.compile(r"^\[([^\]]+)\]")
_INNER = re.compile(r":\s*([^:]+?)(?:\s+(?:type|mode|status|event))?:")


def categories(message: str) -> set[str]:
    """A line's categories: `MCP server "x"` (mcp and x), its `Word:` prefix, its `[tag]`, a one-word inner label."""
    found: set[str] = set()
    if m := _MCP.match(message):
        found |= {"mcp", m.group(1).lower()}
    elif m := _PREFIX.match(message):
        found.add(m.group(1).strip().lower())
    if m := _BRACKET.match(message):
        found.add(m.group(1).strip().lower())
    if m := _INNER.search(message):
        word = m.group(1).strip().lower()
        if len(word) < 30 and " " not in word:
            found.add(word)
    return found


class DebugLog:
    """Writes the kept lines to one stream, whole lines from any thread."""

    def __init__(self, stream: TextIO, keep: Filter) -> None:
        self._stream, self._keep, self._lock = stream, keep, threading.Lock()

    def __call__(self, message: str) -> None:
        if not self._keep.keeps(message):
            return
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        with self._lock, contextlib.suppress(OSError, ValueError):  # a full disk or a gone reader loses only the log
            self._stream.write(f"{stamp} [DEBUG] {inert(message)}\n")  # on stderr, or a file shown later
            self._stream.flush()


def start(filter_text: str | None, file: str | None, to_stderr: bool, session_id: str, root: Path) -> Path | None:
    """Turn the debug log on; the file it goes to (None: stderr)."""
    keep = parse_filter(filter_text)
    if to_stderr:
        diagnostics.set_debug(DebugLog(sys.stderr, keep))
        diagnostics.debug("Debug log of agentteams session %s (%s)", session_id, os.getpid())
        return None
    path = Path(file).expanduser() if file else root / "debug" / f"{session_id}.txt"
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    # private to the user, as the store's files: the log holds prompts, tool input and output
    stream = os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE), "a",
                       encoding="utf-8")  # fmt: skip
    if not file:  # `debug/latest` names the newest session's log, as claude's does
        latest = path.parent / "latest"
        with contextlib.suppress(OSError):
            latest.unlink(missing_ok=True)
            latest.symlink_to(path)
    diagnostics.set_debug(DebugLog(stream, keep))
    diagnostics.debug("Debug log of agentteams session %s (%s)", session_id, os.getpid())
    return path
