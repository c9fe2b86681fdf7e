"""Stand-ins on the spawning side: a spawner whose spawns fail, one that only keeps the requests it was given, and a
teammate program that only prints a version line (what the lead probes before giving it a key)."""

from __future__ import annotations

from pathlib import Path

from agentteams.team.spawn.base import Handle, SpawnRequest


def fake_program(tmp_path: Path, version_line: str) -> list[str]:
    path = tmp_path / "teammate-program"
    path.write_text(f"#!/bin/sh\necho '{version_line}'\n", encoding="utf-8")
    path.chmod(0o755)
    return [str(path)]


class FailingSpawner:
    backend = "tmux"
    takes_lead_key = True

    def spawn(self, req: SpawnRequest) -> Handle:
        raise OSError("no pane")

    def alive(self, handle: Handle, team: str) -> bool:
        return False

    def stop(self, handle: Handle) -> None:
        pass


class KeptSpawner(FailingSpawner):
    def __init__(self) -> None:
        self.requests: list[SpawnRequest] = []

    def spawn(self, req: SpawnRequest) -> Handle:
        self.requests.append(req)
        return Handle(req.name, "tmux", pane_id="%9")
