"""`agentteams set` requests: a shell holds no lead key and a teammate takes a change only in its lead's signed voice,
so the CLI leaves a request in the team's directory for the running lead (team/livechange.py), which answers it.
SendMessage writes only inboxes: no teammate's message, and no forged inbox entry, can make a request."""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentteams import diagnostics
from agentteams.store.atomicjson import atomic_write_json, epoch_ms
from agentteams.store.paths import Layout

QUEUE = "agentteams-changes"
ANSWER = ".answer.json"
POLL = 0.05  # seconds between looks for the lead's answer


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


def queue_dir(layout: Layout, team: str) -> Path:
    return layout.team_dir(team) / QUEUE


def submit(layout: Layout, team: str, agent: str, *, mode: str | None, model: str | None) -> ChangeRequest:
    """Leave a request for the team's lead."""
    request = ChangeRequest(uuid.uuid4().hex[:16], agent, mode, model)
    where = queue_dir(layout, team)
    where.mkdir(mode=0o700, exist_ok=True)
    body = {"agent": agent, "mode": mode, "model": model, "requestedAt": epoch_ms()}
    atomic_write_json(where / f"{request.request_id}.json", {k: v for k, v in body.items() if v is not None})
    return request


def pending(layout: Layout, team: str) -> list[ChangeRequest]:
    """The requests waiting, each taken off the queue (an unreadable one is dropped with a warning)."""
    try:
        names = sorted(n for n in os.listdir(queue_dir(layout, team)) if _is_request(n))
    except FileNotFoundError:
        return []
    out = []
    for name in names:
        path = queue_dir(layout, team) / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            path.unlink()
        except (OSError, ValueError) as e:
            diagnostics.warning("team %s: change request %s unreadable (%s); dropped", team, name, e)
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        fields = {k: data.get(k) if isinstance(data, dict) else None for k in ("agent", "mode", "model")}
        if not all(v is None or isinstance(v, str) for v in fields.values()) or not fields["agent"]:
            diagnostics.warning("team %s: change request %s names no teammate; dropped", team, name)
            continue
        out.append(ChangeRequest(name.removesuffix(".json"), str(fields["agent"]), fields["mode"], fields["model"]))
    return out


def answer(layout: Layout, team: str, request: ChangeRequest, ok: bool, message: str) -> None:
    atomic_write_json(queue_dir(layout, team) / f"{request.request_id}{ANSWER}", {"ok": ok, "message": message})


def wait_answer(layout: Layout, team: str, request: ChangeRequest, timeout: float) -> tuple[bool, str] | None:
    """The lead's answer (ok, what it said), or None if none came in `timeout` seconds (the request is withdrawn)."""
    path = queue_dir(layout, team) / f"{request.request_id}{ANSWER}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError, ValueError):
            data = json.loads(path.read_text(encoding="utf-8"))
            path.unlink()
            return bool(data.get("ok")), str(data.get("message", ""))
        time.sleep(POLL)  # a shell command waiting on another process: nothing to be woken by
    with contextlib.suppress(FileNotFoundError):
        (queue_dir(layout, team) / f"{request.request_id}.json").unlink()
    return None


def _is_request(name: str) -> bool:
    return name.endswith(".json") and not name.endswith(ANSWER) and not name.startswith(".")
