"""`agentteams set` requests in Redis: a list per team (`at:{team}:changes`) the running lead empties each round,
and one list per request for its answer, which the shell waits on with a blocking pop (no polling)."""

from __future__ import annotations

import json

from agentteams import diagnostics
from agentteams.store.change_requests import ChangeRequest, new_request, parse_request
from agentteams.store.paths import team_dir_name
from agentteams.store.redis.connection import Client, Keys

ANSWER_TTL_S = 300  # an answer nobody waits for any more (the shell gave up) does not stay for ever


class RedisChanges:
    """The change queue over one Redis database."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def submit(self, team: str, agent: str, *, mode: str | None, model: str | None) -> ChangeRequest:
        request = new_request(agent, mode=mode, model=model)
        self.client.rpush(Keys(team_dir_name(team)).changes, _entry(request))
        return request

    def pending(self, team: str) -> list[ChangeRequest]:
        """The requests waiting, taken off the list in one step (another reader gets none of them twice)."""
        key = Keys(team_dir_name(team)).changes
        with self.client.pipeline() as pipe:  # MULTI: read and empty together
            pipe.lrange(key, 0, -1)
            pipe.delete(key)
            raw, _ = pipe.execute()
        out = []
        for item in raw:
            try:
                data = json.loads(item)
            except ValueError as e:
                diagnostics.warning("team %s: change request unreadable (%s); dropped", team, e)
                continue
            request_id = data.pop("id", "") if isinstance(data, dict) else ""
            if (request := parse_request(team, str(request_id), data)) is not None:
                out.append(request)
        return out

    def answer(self, team: str, request: ChangeRequest, ok: bool, message: str) -> None:
        key = Keys(team_dir_name(team)).change_answer(request.request_id)
        with self.client.pipeline() as pipe:
            pipe.rpush(key, json.dumps({"ok": ok, "message": message}))
            pipe.expire(key, ANSWER_TTL_S)
            pipe.execute()

    def wait_answer(self, team: str, request: ChangeRequest, timeout: float) -> tuple[bool, str] | None:
        """The lead's answer, or None after `timeout` s (the request is withdrawn if the lead never took it)."""
        keys = Keys(team_dir_name(team))
        got = self.client.blpop([keys.change_answer(request.request_id)], timeout=max(timeout, 0.01))
        if got is None:
            self.client.lrem(keys.changes, 0, _entry(request))
            return None
        try:
            data = json.loads(got[1])
        except ValueError:
            return None
        return bool(data.get("ok")), str(data.get("message", ""))


def _entry(request: ChangeRequest) -> str:
    """The list element: the same text each time for one request, so a withdrawal (LREM) finds it."""
    body = {"id": request.request_id, "agent": request.agent, "mode": request.mode, "model": request.model}
    return json.dumps({k: v for k, v in body.items() if v is not None}, sort_keys=True)
