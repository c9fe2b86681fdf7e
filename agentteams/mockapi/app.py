"""The mock API's behaviour, free of HTTP: dispatch by method and path, scripted replies, the request log.

Each request becomes one `Reply` (a JSON body or a list of SSE events) and one logged record.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentteams.mockapi import cloud
from agentteams.mockapi.render import Renderer, structured_fallback
from agentteams.mockapi.router import Router
from agentteams.mockapi.script import ERROR_TYPES, ErrorSpec, Script
from agentteams.mockapi.sse import MALFORMED, Event, error_body, message_events
from agentteams.mockapi.usage import PromptCache, estimate_tokens

SECRET_HEADERS = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie", "x-amz-security-token"})
REDACTED = "<redacted>"
Record = dict[str, Any]


@dataclass
class Reply:
    status: int
    body: dict[str, Any] | None = None  # JSON body; None for HEAD or a stream
    headers: dict[str, str] = field(default_factory=dict)
    events: list[Event] | None = None  # SSE events for a streamed reply
    delta_delay: float = 0.0  # seconds between content_block_delta events
    framing: Literal["sse", "eventstream"] = "sse"  # how `events` are sent: Bedrock streams AWS event-stream frames


def redact(headers: dict[str, str]) -> dict[str, str]:
    """Headers with lower-cased names and every credential replaced by "<redacted>"."""
    return {k.lower(): REDACTED if k.lower() in SECRET_HEADERS else v for k, v in headers.items()}


def error_reply(status: int, message: str, etype: str | None = None, request_id: str | None = None) -> Reply:
    etype = etype or ERROR_TYPES.get(status, "api_error")
    headers = {"request-id": request_id} if request_id else {}
    return Reply(status, error_body(etype, message, request_id), headers)


def _invalid(body: Any, *, need_max_tokens: bool) -> str | None:
    """Why a request body is not a Messages API request, or None if it will do."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str):
        return "model: Field required"
    if not isinstance(body.get("messages"), list):
        return "messages: Field required"
    if need_max_tokens and (not isinstance(body.get("max_tokens"), int) or isinstance(body["max_tokens"], bool)):
        return "max_tokens: Field required"
    return None


class MockApp:
    """Scripted answers for one server: router, renderer, prompt cache and the request log."""

    def __init__(self, script: Script, log_path: str | Path | None = None) -> None:
        self.router = Router(script)
        self.renderer = Renderer()
        self.cache = PromptCache()
        self.log_path = Path(log_path) if log_path is not None else None
        self._records: list[Record] = []
        self._arrivals: list[Record] = []  # routed, maybe not yet answered (a `delay_ms` turn is still waiting)
        self._changed = threading.Condition()

    def handle(
        self, method: str, target: str, headers: dict[str, str], raw: str, arrived: float | None = None
    ) -> Reply:
        """Answer one HTTP request and log it; `ts` is when it `arrived` (its first line was read), else now."""
        path = target.split("?", 1)[0]
        ts = time.time() if arrived is None else arrived
        record: Record = {"ts": ts, "method": method, "path": target, "route": None, "turn": None,
                          "headers": redact(headers), "body": _parsed(raw)}  # fmt: skip
        if method in ("GET", "HEAD") and path == "/":
            reply = Reply(200, None if method == "HEAD" else {"status": "ok"})
        elif method == "POST" and path == "/v1/messages":
            reply = self._messages(record, raw)
        elif method == "POST" and path == "/v1/messages/count_tokens":
            reply = self._count_tokens(record["body"], raw)
        elif method == "POST" and (call := cloud.parse(path, headers)) is not None:
            reply = self._cloud(record, raw, call)
        else:
            reply = error_reply(404, f"Not found: {method} {path}", request_id=self._request_id())
        record["status"] = reply.status
        record["response"] = reply.body if reply.body is not None else record.get("response")
        self._log(record)
        return reply

    def _request_id(self) -> str:
        return f"req_mock_{self.renderer.next_id():06d}"

    def _count_tokens(self, body: Any, raw: str) -> Reply:
        rid = self._request_id()
        problem = _invalid(body, need_max_tokens=False)
        if problem:
            return error_reply(400, problem, request_id=rid)
        return Reply(200, {"input_tokens": estimate_tokens(raw)}, {"request-id": rid})

    def _messages(self, record: Record, raw: str) -> Reply:
        body, rid = record["body"], self._request_id()
        problem = _invalid(body, need_max_tokens=True)
        if problem:
            return error_reply(400, problem, request_id=rid)
        choice = self.router.choose(body, raw)
        record["route"], record["turn"] = choice.route, choice.turn
        with self._changed:
            self._arrivals.append(record)
            self._changed.notify_all()
        turn = choice.answer if choice.route is not None else structured_fallback(choice.answer, body)
        if turn.delay_ms:
            time.sleep(turn.delay_ms / 1000)
        if turn.error is not None:
            return self._error_turn(turn.error, record, rid, stream=bool(body.get("stream")))
        if turn.malformed and body.get("stream"):
            start = _empty_message(body, f"msg_mock_{self.renderer.next_id():06d}")
            record["response"] = {"malformed": True}
            events: list[Event] = [("message_start", {"type": "message_start", "message": start}), (MALFORMED, {})]
            return Reply(200, None, {"request-id": rid}, events)
        message = self.renderer.message(turn, body, raw, self.cache.input_usage(body, raw))
        record["response"] = message
        headers = {"request-id": rid}
        if body.get("stream"):
            events = list(message_events(message, turn.chunk))
            return Reply(200, None, headers, events, turn.delta_delay_ms / 1000)
        return Reply(200, message, headers)

    def _cloud(self, record: Record, raw: str, call: cloud.CloudCall) -> Reply:
        """A Bedrock or Vertex call: answered as the Messages request it stands for, logged with what it named."""
        record["cloud"] = call.record()
        body, problem = cloud.messages_body(call, record["body"])
        if body is None:
            return error_reply(400, problem or "bad request", request_id=self._request_id())
        record["body"] = body
        reply = self._messages(record, raw)
        if call.cloud == "bedrock" and reply.events is not None:
            reply.framing = "eventstream"
        return reply

    def _error_turn(self, spec: ErrorSpec, record: Record, rid: str, *, stream: bool) -> Reply:
        if spec.in_stream and stream:
            record["response"] = error_body(spec.type, spec.message, rid)
            start = _empty_message(record["body"], f"msg_mock_{self.renderer.next_id():06d}")
            events: list[Event] = [("message_start", {"type": "message_start", "message": start}),
                                   ("error", error_body(spec.type, spec.message))]  # fmt: skip
            return Reply(200, None, {"request-id": rid}, events)
        reply = error_reply(spec.status, spec.message, spec.type, rid)
        if spec.retry_after is not None:
            reply.headers["retry-after"] = f"{spec.retry_after:g}"
        return reply

    def _log(self, record: Record) -> None:
        with self._changed:
            self._records.append(record)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            self._changed.notify_all()

    @property
    def records(self) -> list[Record]:
        with self._changed:
            return list(self._records)

    @property
    def arrivals(self) -> list[Record]:
        """Every Messages request once routed, before its answer: what a model is working on right now."""
        with self._changed:
            return list(self._arrivals)

    @property
    def count(self) -> int:
        """How many records there are: a later `wait_for(since=...)` looks only at the ones after them."""
        with self._changed:
            return len(self._records)

    def wait_for(
        self, n: int, timeout: float, where: Callable[[Record], bool] | None = None, since: int = 0
    ) -> list[Record]:
        """At least `n` records from the `since`th on (those `where` accepts, if given), waiting up to `timeout`
        seconds."""
        deadline = time.monotonic() + timeout
        hits: list[Record] = []
        seen = since  # records are only appended: each wake-up looks at the new ones only. A rescan of every record
        # held the GIL for ~1 ms at 100 records, and the server's threads live in the caller's process: a request
        # arriving meanwhile was stamped late (a benchmark's own waiting inflated what it measured)
        with self._changed:
            while True:
                hits += [r for r in self._records[seen:] if where is None or where(r)]
                seen = len(self._records)
                left = deadline - time.monotonic()
                if len(hits) >= n:
                    return hits
                if left <= 0:
                    raise TimeoutError(f"mock API: {len(hits)} of {n} requests after {timeout:g}s")
                self._changed.wait(left)


def _parsed(raw: str) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _empty_message(body: dict[str, Any], message_id: str) -> dict[str, Any]:
    usage = {"input_tokens": estimate_tokens(json.dumps(body)), "output_tokens": 1,
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}  # fmt: skip
    return {"id": message_id, "type": "message", "role": "assistant", "model": body.get("model", "claude-mock"),
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}  # fmt: skip
