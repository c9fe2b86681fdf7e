"""Anthropic's API without importing the SDK: a streamed Messages request with the headers, URL and timeout the SDK's
`messages.stream` sends (read from its files: model/sdk_facts.py), over http.client (model/http_wire.py) or the SDK's
HTTP library, the answer read by us (model/answer.py), refusals worded as its errors. Bedrock, Vertex: provider_sdk."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, cast

from agentteams.model import http_wire, sdk_facts
from agentteams.model import wire_body as wirebody
from agentteams.model.answer import Answer
from agentteams.model.config import ModelConfig

DEFAULT_BASE_URL = "https://api.anthropic.com"
APP_HEADERS = {"x-app": "agentteams"}
STREAM_HEADERS = {"x-stainless-helper-method": "stream", "x-stainless-stream-helper": "messages"}  # as the SDK's
_OMIT = object()  # a header our layer removes (the SDK's `Omit`)
_SSL_CONTEXT: Any = None
_SSL_LOCK = threading.Lock()


class StatusError(Exception):
    """The API refused with a 4xx/5xx status, or sent an `error` event mid-stream: the fields the SDK's
    `APIStatusError` has (status, parsed body, its error's type and message, the request id), its message worded
    as the SDK's."""

    def __init__(self, message: str, *, status_code: int, body: object, response: Any) -> None:
        super().__init__(message)
        self.message, self.status_code, self.body, self.response = message, status_code, body, response
        self.request_id: str | None = response.headers.get("request-id")
        inner = body.get("error") if isinstance(body, dict) else None
        inner = inner if isinstance(inner, dict) else {}
        self.type: str | None = inner.get("type") if isinstance(inner.get("type"), str) else None
        self.api_message: str | None = inner.get("message") if isinstance(inner.get("message"), str) else None


def shared_ssl_context() -> Any:
    """One TLS context per process (loading the CA store costs ~30 ms per client); a fork server warms it,
    so a forked teammate's first request does not pay for it."""
    global _SSL_CONTEXT
    with _SSL_LOCK:  # a warm-up thread and the first request may both ask
        if _SSL_CONTEXT is None:
            import ssl

            _SSL_CONTEXT = ssl.create_default_context()
    return _SSL_CONTEXT


def auth_headers(cfg: ModelConfig) -> dict[str, Any]:
    """Our headers; an API key goes in `x-api-key` (as Claude Code sends it, and as gateways expect) even where the
    SDK would send it as `Authorization: Bearer`; an auth token stays a bearer token. `omitted()` marks a removal."""
    if not cfg.api_key:
        return {**APP_HEADERS, **dict(cfg.headers)}
    return {**APP_HEADERS, **dict(cfg.headers), "x-api-key": cfg.api_key, "Authorization": _OMIT}


def omitted(value: object) -> bool:
    return value is _OMIT


def http_module() -> Any:
    """The HTTP library the installed SDK is built on (httpx2, or httpx in older SDKs)."""
    facts = sdk_facts.installed()
    if facts is not None:
        return importlib.import_module(facts.http_library)
    import anthropic  # its files did not say: the slow way, asking the SDK itself

    for name in ("httpx2", "httpx"):
        module = importlib.import_module(name) if importlib.util.find_spec(name) else None
        if module is not None and issubclass(anthropic.DefaultHttpxClient, module.Client):
            return module
    raise ImportError("the anthropic SDK's HTTP library was not found")


class Wire(Protocol):
    """What sends a request: http_wire.HttpWire, or the SDK's HTTP library (`LibraryWire`); both answer with a
    response that has `status_code`, `headers`, `iter_lines`, `read`, `text` and `close`."""

    def post(self, url: str, headers: dict[str, str], body: bytes, timeout: float) -> Any: ...

    def close(self) -> None: ...


class LibraryWire:
    """The SDK's HTTP library (httpx2), as the SDK's DefaultHttpxClient is built: for what http_wire does not do
    (a SOCKS proxy) and for an in-memory httpx transport."""

    def __init__(self, transport: Any = None) -> None:
        module = http_module()
        extra = {"transport": transport} if transport is not None else {}
        self._http = module.Client(verify=shared_ssl_context(), follow_redirects=True, **extra)

    def post(self, url: str, headers: dict[str, str], body: bytes, timeout: float) -> Any:
        request = self._http.build_request("POST", url, content=body, headers=headers, timeout=timeout)
        return self._http.send(request, stream=True)

    def close(self) -> None:
        self._http.close()


class FirstParty:
    """Anthropic's API for one `ModelConfig`: its wire (built on first use), and every request's fixed headers
    and URL, built once."""

    def __init__(self, config: ModelConfig, *, transport: Any = None, wire: Wire | None = None) -> None:
        self.config = config
        self._transport = transport  # an in-memory httpx transport (tests)
        self._lock = threading.Lock()
        self._http: Wire | None = wire  # given: the fork server's rehearsal, tests
        self._fixed: tuple[dict[str, str], str] | None = None

    def answer(
        self, params: dict[str, Any], on_open: Callable[[], None] | None, answer: Answer,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> str | None:  # fmt: skip
        """Send `params`, feed the answer's events to `answer` (and `on_event`) as they arrive; the response's request
        id. An `error` event raises `StatusError`, as the SDK's stream raises its own."""
        body = wirebody.body({k: v for k, v in params.items() if k != "extra_headers"})
        response = self._send(body, params.get("extra_headers"))
        try:
            if on_open is not None:
                on_open()
            for name, data in server_sent_events(response.iter_lines()):
                if name is None or name == "ping":
                    continue
                if name == "error":
                    raise _error_event(data, response)
                if data:
                    event = _event(data)
                    if on_event is not None:
                        on_event(event)
                    answer.feed(event)
        finally:
            response.close()
        return cast("str | None", response.headers.get("request-id"))

    def close(self) -> None:
        with self._lock:
            http, self._http = self._http, None
        if http is not None:
            http.close()

    def _send(self, body: bytes, extra: dict[str, str] | None) -> Any:
        headers, url = self._fixed or self._build()
        wire = self._client(url)
        response = wire.post(url, {**headers, **extra} if extra else headers, body, self.config.timeout)
        if response.status_code >= 400:
            response.read()  # the error carries the body: read it before the response is closed
            response.close()
            raise _status_error(response)
        return response

    def _client(self, url: str) -> Wire:
        with self._lock:
            if self._http is None:
                self._http = self._new_wire(url)
            return self._http

    def _new_wire(self, url: str) -> Wire:
        if self._transport is not None:
            return LibraryWire(self._transport)
        try:
            http_wire.check_supported(url)
        except http_wire.Unsupported:
            return LibraryWire()
        return http_wire.HttpWire(shared_ssl_context)

    def _build(self) -> tuple[dict[str, str], str]:
        cfg = self.config
        # as the SDK's `messages.stream` sends them: it gives no per-request timeout, and names that (NOT_GIVEN); our
        # own retries resend with the count at 0, as the SDK's does with its own retries off
        per_request = {"x-stainless-timeout": "NOT_GIVEN", "x-stainless-retry-count": "0",
                       "x-stainless-read-timeout": str(cfg.timeout)}  # fmt: skip
        merged = {**per_request, **sdk_headers(cfg), **STREAM_HEADERS}
        headers = {name: value for name, value in merged.items() if isinstance(value, str)}
        base = cfg.base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL  # the SDK's order
        self._fixed = headers, base.rstrip("/") + "/v1/messages"
        return self._fixed


def sdk_headers(cfg: ModelConfig) -> dict[str, object]:
    """The client-level headers the SDK's `Anthropic` would send for `cfg` (before a request's own); a value that is
    not a string is a removal."""
    facts = sdk_facts.installed()
    custom = {**custom_headers_from_env(), **auth_headers(cfg)}
    if facts is None:  # the SDK's files did not say: ask a client of it (slow, once)
        return _headers_from_sdk(cfg, custom)
    bearer = {} if cfg.api_key or not cfg.auth_token else {"Authorization": f"Bearer {cfg.auth_token}"}
    # layered as the SDK's base client and then its `Anthropic` client layer them (the order of the names too)
    base = {**facts.platform_headers(), **bearer, **custom}
    return {**base, "X-Stainless-Async": "false", "anthropic-version": facts.api_version, **custom}


def custom_headers_from_env() -> dict[str, str]:
    """ANTHROPIC_CUSTOM_HEADERS ("Name: value" per line), as the SDK reads it; ours win over them."""
    parsed: dict[str, str] = {}
    for line in os.environ.get("ANTHROPIC_CUSTOM_HEADERS", "").split("\n"):
        name, colon, value = line.partition(":")
        if colon:
            parsed[name.strip()] = value.strip()
    return parsed


def _headers_from_sdk(cfg: ModelConfig, custom: dict[str, object]) -> dict[str, object]:
    import anthropic

    credential = {"api_key": cfg.api_key} if cfg.api_key else {"auth_token": cfg.auth_token}
    ours: dict[str, Any] = {name: anthropic.Omit() if omitted(value) else value for name, value in custom.items()}
    sdk = anthropic.Anthropic(**credential, base_url=cfg.base_url, default_headers=ours, max_retries=0)
    try:
        return dict(sdk.default_headers)
    finally:
        sdk.close()


def server_sent_events(lines: Iterable[str]) -> Iterator[tuple[str | None, str]]:
    """(event, data) for each event of a text/event-stream (comments and unknown fields skipped; data lines joined)."""
    event: str | None = None
    data: list[str] = []
    for line in lines:
        if not line:
            if event is not None or data:
                yield event, "\n".join(data)
            event, data = None, []
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if event is not None or data:
        yield event, "\n".join(data)


def _status_error(response: Any) -> StatusError:
    """The error for a refused request, worded as the SDK's (`Error code: 429 - {body}`)."""
    return _refusal(response.text.strip(), response, prefix=f"Error code: {response.status_code} - ")


class MalformedStream(Exception):
    """An answer's stream event that is not JSON: the answer is lost (a broken proxy, a bad deploy); asked again."""


def _event(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise MalformedStream(f"a stream event that is not JSON ({data[:60]!r})") from None


def _error_event(data: str, response: Any) -> StatusError:
    """An `error` event inside a 200 stream, as the SDK's stream raises it (its body alone)."""
    return _refusal(data, response, prefix="")


def _refusal(text: str, response: Any, *, prefix: str) -> StatusError:
    """The body parsed when it is JSON (the message then `prefix` + the body), else the text as it came."""
    body: object = text
    try:
        body = json.loads(text)
        message = f"{prefix}{body}"
    except ValueError:
        message = text or f"Error code: {response.status_code}"
    return StatusError(message, status_code=response.status_code, body=body, response=response)
