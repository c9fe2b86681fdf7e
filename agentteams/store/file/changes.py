"""`agentteams set` requests in the file store: one JSON file per request in the team's `agentteams-changes/`
folder, answered by the running lead beside it (`<id>.answer.json`)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from agentteams import diagnostics
from agentteams.store.change_requests import ChangeRequest, new_request, parse_request
from agentteams.store.fs.atomic_json import atomic_write_json
from agentteams.store.paths import Layout

QUEUE = "agentteams-changes"
ANSWER = ".answer.json"
POLL = 0.05  # seconds between looks for the lead's answer in the file store


class FileChanges:
    """Requests as `teams/<team>/agentteams-changes/<id>.json`, answers beside them as `<id>.answer.json`."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout

    def queue_dir(self, team: str) -> Path:
        return self.layout.team_dir(team) / QUEUE

    def submit(self, team: str, agent: str, *, mode: str | None, model: str | None) -> ChangeRequest:
        """Leave a request for the team's lead."""
        request = new_request(agent, mode=mode, model=model)
        where = self.queue_dir(team)
        where.mkdir(mode=0o700, exist_ok=True)
        atomic_write_json(where / f"{request.request_id}.json", request.to_json())
        return request

    def pending(self, team: str) -> list[ChangeRequest]:
        """The requests waiting, each taken off the queue (an unreadable one is dropped with a warning)."""
        try:
            names = sorted(n for n in os.listdir(self.queue_dir(team)) if _is_request(n))
        except FileNotFoundError:
            return []
        out = []
        for name in names:
            path = self.queue_dir(team) / name
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                path.unlink()
            except (OSError, ValueError) as e:
                diagnostics.warning("team %s: change request %s unreadable (%s); dropped", team, name, e)
                with contextlib.suppress(OSError):
                    path.unlink()
                continue
            if (request := parse_request(team, name.removesuffix(".json"), data)) is not None:
                out.append(request)
        return out

    def answer(self, team: str, request: ChangeRequest, ok: bool, message: str) -> None:
        atomic_write_json(self.queue_dir(team) / f"{request.request_id}{ANSWER}", {"ok": ok, "message": message})

    def wait_answer(self, team: str, request: ChangeRequest, timeout: float) -> tuple[bool, str] | None:
        """The lead's answer (ok, what it said), or None if none came in `timeout` s (the request is withdrawn)."""
        path = self.queue_dir(team) / f"{request.request_id}{ANSWER}"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(FileNotFoundError, ValueError):
                data = json.loads(path.read_text(encoding="utf-8"))
                path.unlink()
                return bool(data.get("ok")), str(data.get("message", ""))
            time.sleep(POLL)  # a shell command waiting on another process: nothing to be woken by
        with contextlib.suppress(FileNotFoundError):
            (self.queue_dir(team) / f"{request.request_id}.json").unlink()
        return None


def _is_request(name: str) -> bool:
    return name.endswith(".json") and not name.endswith(ANSWER) and not name.startswith(".")
