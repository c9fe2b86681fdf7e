"""`agentteams set` requests: a shell holds no lead key and a teammate takes a change only in its lead's signed voice,
so the CLI leaves a request in the team's store for its running lead (team/lead/) to answer. Files here; Redis
in store/redis/changes.py. SendMessage writes only inboxes: no message and no forged entry can make a request."""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentteams import diagnostics
from agentteams.store.atomic_json import atomic_write_json, epoch_ms
from agentteams.store.paths import Layout

QUEUE = "agentteams-changes"
ANSWER = ".answer.json"
POLL = 0.05  # seconds between looks for the lead's answer in the file store


@dataclass(frozen=True)
class ChangeRequest:
    """One `agentteams set TEAM AGENT --mode M --model X`."""

    request_id: str
    agent: str
    mode: str | None = None
    model: str | None = None

    def changes(self) -> list[tuple[Literal["mode", "model"], str]]:
        out: list[tuple[Literal["mode", "model"], str]] = []
        if self.mode is not None:
            out.append(("mode", self.mode))
        if self.model is not None:
            out.append(("model", self.model))
        return out

    def to_json(self) -> dict[str, Any]:
        body = {"agent": self.agent, "mode": self.mode, "model": self.model, "requestedAt": epoch_ms()}
        return {k: v for k, v in body.items() if v is not None}


def new_request(agent: str, *, mode: str | None, model: str | None) -> ChangeRequest:
    return ChangeRequest(uuid.uuid4().hex[:16], agent, mode, model)


def parse_request(team: str, request_id: str, data: Any) -> ChangeRequest | None:
    """A stored request, or None (with a warning) when it names no teammate."""
    fields = {k: data.get(k) if isinstance(data, dict) else None for k in ("agent", "mode", "model")}
    if not all(v is None or isinstance(v, str) for v in fields.values()) or not fields["agent"]:
        diagnostics.warning("team %s: change request %s names no teammate; dropped", team, request_id)
        return None
    return ChangeRequest(request_id, str(fields["agent"]), fields["mode"], fields["model"])


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
