"""A node ships its teammates' transcripts through the store, so `agentteams logs` works from any machine: at each
beat, the complete lines each running teammate's transcript gained since the last beat (a transcript stays a file
on the node; the store keeps a bounded copy of its lines, gone with the team)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from agentteams.store.api import Store
from agentteams.store.fs import safe_paths
from agentteams.store.paths import Layout

MAX_SHIP = 1 << 20  # bytes read per teammate per beat: a huge backlog goes over several beats


@dataclass
class _Tail:
    path: Path | None = None
    offset: int = 0


class LogShipper:
    """Offsets into each teammate's transcript, and the store it ships new lines to."""

    def __init__(self, store: Store, layout: Layout) -> None:
        self.store = store
        self.layout = layout
        self._tails: dict[tuple[str, str], _Tail] = {}

    def ship(self, team: str, name: str, cwd: Path) -> None:
        """Send the new complete lines of `name`'s transcript (found by its presence's session id)."""
        tail = self._tails.setdefault((team, name), _Tail())
        if tail.path is None:
            presence = self.store.presence.read(team, name)
            if presence is None or not presence.session_id:
                return
            tail.path = self.layout.transcript_file(cwd, presence.session_id)
        try:
            with safe_paths.open_file(tail.path, "rb") as f:
                f.seek(tail.offset)
                chunk = f.read(MAX_SHIP)
        except FileNotFoundError:
            return
        done = chunk.rfind(b"\n") + 1  # a line still being written waits for its newline
        if done:
            lines = [line.decode("utf-8", "replace") for line in chunk[:done].splitlines() if line.strip()]
            self.store.nodes.ship_log(team, name, lines)
            tail.offset += done

    def forget(self, team: str, name: str, cwd: Path) -> None:
        """A teammate that ended: its last lines shipped, its offset dropped."""
        with contextlib.suppress(Exception):
            self.ship(team, name, cwd)
        self._tails.pop((team, name), None)
