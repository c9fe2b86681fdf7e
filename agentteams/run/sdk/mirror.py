"""`--session-mirror`: each transcript entry the session writes also goes out on stdout as a `transcript_mirror`
line, which the Agent SDK hands to the program's session store (its copy of the session, keyed by the file's path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentteams.run import headless


def mirror_line(path: Path, entry: dict[str, Any]) -> None:
    """One entry as it was written to `path`: the SDK derives the store's key from the path under its config dir."""
    headless.emit({"type": "transcript_mirror", "filePath": str(path), "entries": [entry]})
