"""The Agent SDKs' control protocol over stdin/stdout: stdin read on a thread of its own (the program's user messages
queued in order, its control requests answered as they come, the answers to ours matched by request id), and our
own requests to the program (`can_use_tool`, `hook_callback`, `mcp_message`) sent and awaited with a deadline."""

from __future__ import annotations

import itertools
import json
import queue
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError

Emit = Callable[[dict[str, Any]], None]
REQUEST_TIMEOUT = 600.0  # seconds an answer from the program may take (a person may be asked there)
IDLE_AFTER = 1.0  # seconds without a message from the program after which the session counts as waiting for it
_ENDED = "\0ended"  # a pending request's error once the program's input ended


class ControlError(AgentTeamsError):
    """The program answered our request with an error, never answered it in time, or its input ended first."""


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    response: dict[str, Any] | None = None
    error: str | None = None


def parse(line: str) -> dict[str, Any] | None:
    """One stdin line as a JSON object (None for a blank line); ValueError when it is not one."""
    obj = json.loads(line) if line.strip() else None
    if obj is not None and not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    return obj


class ControlChannel:
    """One program on the other end of stdin/stdout. `answer(request)` gives the lines a control request of the
    program's is answered with (its reply among them): an `interrupt` at once, on the reader's thread, the others in
    the order they came on one thread of their own, so a slow one never holds up an interrupt nor reorders two mode
    changes."""

    def __init__(self, stream: Any, emit: Emit, answer: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> None:
        self._stream, self._emit, self._answer = stream, emit, answer
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._arrived: dict[int, float] = {}  # when each waiting message came (by id), for `came_before`
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._closed = False
        self._reader = threading.Thread(target=self._read, name="sdk-stdin", daemon=True)
        self._requests: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._worker = threading.Thread(target=self._work, name="sdk-control", daemon=True)

    def start(self) -> None:
        self._worker.start()
        self._reader.start()

    def messages(self, idle: Callable[[], None] | None = None) -> Iterator[dict[str, Any]]:
        """The program's `user` messages (and anything else that is not control traffic), in order, until its input
        ends; `idle` is called once, the first time none has come for IDLE_AFTER seconds."""
        waiting = [idle] if idle is not None else []
        while True:
            try:
                obj = self._messages.get(timeout=IDLE_AFTER) if waiting else self._messages.get()
            except queue.Empty:
                waiting.pop()()
                continue
            if obj is None:
                return
            yield obj

    def came_before(self, message: dict[str, Any], moment: float) -> bool:
        """Whether `message` (taken from `messages`) came before `moment` (a time.monotonic())."""
        return self._arrived.pop(id(message), moment) < moment

    def waiting_since(self, moment: float, joins: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """The messages already waiting that came before `moment` and that `joins` takes, up to the first it does
        not, taken now (none blocks); the end of the input, and anything after, stay for `messages`."""
        taken: list[dict[str, Any]] = []
        while True:
            with self._messages.mutex:  # a peek: the oldest waiting one, if it is old enough
                oldest = self._messages.queue[0] if self._messages.queue else None
                if oldest is None or self._arrived.get(id(oldest), moment) >= moment or not joins(oldest):
                    return taken
                self._messages.queue.popleft()
            self._arrived.pop(id(oldest), None)
            taken.append(oldest)

    def request(self, subtype: str, body: dict[str, Any], timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
        """Send a control request to the program and wait for its answer's `response`; ControlError otherwise."""
        request_id = f"req_{next(self._ids)}_{secrets.token_hex(4)}"
        pending = _Pending()
        with self._lock:
            if self._closed:
                raise ControlError(f"the program's input ended: no answer to {subtype}")
            self._pending[request_id] = pending
        self._emit({"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **body}})
        try:
            if not pending.done.wait(timeout):
                self._emit({"type": "control_cancel_request", "request_id": request_id})
                raise ControlError(f"the program did not answer {subtype} within {timeout:g}s")
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        if pending.error == _ENDED:
            raise ControlError(f"the program's input ended: no answer to {subtype}")
        if pending.error is not None:
            raise ControlError(f"the program answered {subtype} with an error: {pending.error}")
        return pending.response or {}

    # -- stdin ----------------------------------------------------------------------------------------

    def _read(self) -> None:
        try:
            for number, line in enumerate(self._stream, start=1):
                try:
                    obj = parse(line)
                except ValueError as e:
                    diagnostics.warning("stdin line %d is not JSON (%s): skipped", number, e)
                    continue
                if obj is not None:
                    self._take(obj)
        finally:
            self._close()

    def _take(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "control_request":
            request = obj.get("request")
            if isinstance(request, dict) and request.get("subtype") == "interrupt":
                self._serve(obj)  # at once: the turn it stops may be what the other requests wait behind
            else:
                self._requests.put(obj)
        elif kind == "control_response":
            response = obj.get("response")
            self._answered(response if isinstance(response, dict) else {})
        elif kind == "control_cancel_request":
            pass  # the program gives up on a request of its own: each of ours ends with its reply anyway
        elif kind == "keep_alive":
            pass
        else:
            self._arrived[id(obj)] = time.monotonic()
            self._messages.put(obj)

    def _work(self) -> None:
        while (obj := self._requests.get()) is not None:
            self._serve(obj)

    def _serve(self, obj: dict[str, Any]) -> None:
        for line in self._answer(obj):
            self._emit(line)

    def _answered(self, response: dict[str, Any]) -> None:
        with self._lock:
            pending = self._pending.get(str(response.get("request_id")))
        if pending is None:
            return  # an answer to a request already given up on
        if response.get("subtype") == "error":
            pending.error = str(response.get("error") or "error")
        else:
            body = response.get("response")
            pending.response = body if isinstance(body, dict) else {}
        pending.done.set()

    def _close(self) -> None:
        with self._lock:
            self._closed = True
            waiting = list(self._pending.values())
        for pending in waiting:
            pending.error = _ENDED
            pending.done.set()
        self._requests.put(None)
        self._messages.put(None)
