"""Session transcripts: one JSONL file per session under `projects/<cwd-slug>/`, with secrets redacted."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentteams.store.atomicjson import encode, now_iso

REDACTED = "<redacted>"


class Transcript:
    """Appends one JSON line per entry; safe to share between threads of one process."""

    def __init__(
        self, path: Path, session_id: str, *, cwd: str, secrets: Sequence[str | None] = (), team: str | None = None
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.team = team  # a teammate's team: how `agentteams logs` finds its transcript after it has exited
        self._secrets = sorted({s for s in secrets if s and len(s) >= 8}, key=len, reverse=True)
        self._lock = threading.Lock()

    def record(self, entry_type: str, agent: str, **fields: Any) -> None:
        entry = {"type": entry_type, "sessionId": self.session_id, "timestamp": now_iso(), "agent": agent,
                 **({"team": self.team} if self.team else {}), "cwd": self.cwd, **fields}  # fmt: skip
        line = json.dumps(entry, ensure_ascii=False, default=str)
        for secret in self._secrets:
            line = line.replace(secret, REDACTED)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, encode(line) + b"\n")
            finally:
                os.close(fd)
