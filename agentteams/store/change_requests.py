"""`agentteams set` requests: a shell holds no lead key and a teammate takes a change only in its lead's signed voice,
so the CLI leaves a request in the team's store for its running lead to answer; the request as every store keeps
it (files: store/file/changes.py, Redis: store/redis/changes.py). No message can make one."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Literal

from agentteams import diagnostics
from agentteams.store.fs.atomic_json import epoch_ms


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
