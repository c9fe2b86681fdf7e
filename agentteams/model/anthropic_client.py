"""The model client: Anthropic's API as the anthropic SDK speaks it, without importing the SDK (model/first_party.py),
or the SDK's own Bedrock and Vertex clients (model/provider_sdk.py). Owns request building with prompt-cache
breakpoints (`build_params`), streaming, and our own retry loop."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentteams import diagnostics
from agentteams.errors import AgentTeamsError
from agentteams.model import http_wire, sdk_facts
from agentteams.model.aliases import wire_model
from agentteams.model.answer import Answer
from agentteams.model.config import NO_CREDENTIALS, MissingCredentialsError, ModelConfig
from agentteams.model.first_party import FirstParty, MalformedStream, StatusError, shared_ssl_context
from agentteams.model.pricing import UsageLedger
from agentteams.model.provider_sdk import Endpoint, SdkClients
from agentteams.model.types import Block, Message, ModelRequest, ModelResponse, RetryNotice, StreamCallbacks, Usage

MAX_BREAKPOINTS = 4
BACKOFF_BASE = 0.5  # seconds before the first retry, doubling after each
BACKOFF_CAP = 30.0
RETRY_AFTER_CAP = 60.0
RETRYABLE_STATUS = frozenset({408, 409, 429})
RETRYABLE_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error",
                             # Bedrock's transient exceptions, as its stream's exception frames name them
                             "throttlingException", "serviceUnavailableException", "internalServerException",
                             "modelStreamErrorException"})  # fmt: skip
UNMARKABLE_BLOCKS = frozenset({"thinking", "redacted_thinking"})
MAX_MESSAGE_CHARS = 400
MIN_SCRUB_CHARS = 8


class ModelAPIError(AgentTeamsError):
    """A model call that failed for good: a refused request, or a transient failure that outlasted the retries."""

    def __init__(
        self, message: str, *, status: int | None = None, error_type: str | None = None, api_message: str = ""
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.api_message = api_message  # the API's own words, as an SDK program is shown them ("API Error: 400 ...")


# ---------------------------------------------------------------- request building (pure)


def _ephemeral() -> dict[str, str]:
    return {"type": "ephemeral"}


def build_params(request: ModelRequest) -> dict[str, Any]:
    """Messages API params for `request`, with cache breakpoints on tools, system and the newest turns.

    Deterministic: the same request gives the same dict, in the API's cache order (tools, system, messages);
    the caller's messages are never mutated, string contents become one text block, and cache_control
    markers already present in the conversation are dropped so there are never more than four breakpoints.
    """
    model, betas = wire_model(request.model)  # `sonnet[1m]`: the id without its suffix, and the beta it needs
    params: dict[str, Any] = {"model": model, "max_tokens": request.max_tokens}
    betas = list(dict.fromkeys([*betas, *request.betas]))
    if betas:
        params["extra_headers"] = {"anthropic-beta": ",".join(betas)}
    for key in ("thinking", "output_config", "context_management"):
        if (value := getattr(request, key)) is not None:
            params[key] = dict(value)
    budget = MAX_BREAKPOINTS
    if request.tools or request.server_tools:
        # the schemas are shared, not copied (~1 ms a request): nothing below or in the SDK writes into them
        tools: list[dict[str, Any]] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools
        ] + [dict(t) for t in request.server_tools]
        tools[-1]["cache_control"] = _ephemeral()
        params["tools"] = tools
        budget -= 1
    if request.tool_choice is not None:
        params["tool_choice"] = dict(request.tool_choice)
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": _ephemeral()}]
        budget -= 1
    messages = [_normalise(m) for m in request.messages]
    for index in _breakpoint_messages(messages)[:budget]:
        _mark_last_block(messages[index])
    params["messages"] = messages
    return params


def _normalise(message: Message) -> Message:
    """A copy with list content (a string becomes one text block) and no cache_control markers: the message and its
    blocks are new dicts (a marker may be set on one), what the blocks hold is shared (a deep copy of the whole
    conversation was the largest part of a request's build), never written to."""
    out = dict(message)
    content = out.get("content")
    if isinstance(content, str):
        out["content"] = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        out["content"] = [_unmarked(b) if isinstance(b, dict) else b for b in content]
    return out


def _unmarked(block: Block) -> Block:
    copied = dict(block)
    copied.pop("cache_control", None)
    return copied


def _breakpoint_messages(messages: list[Message]) -> list[int]:
    """The newest message, then the newest earlier user message (where the previous request's breakpoint sat,
    so that request's cache write is read back however many blocks were added since)."""
    if not messages:
        return []
    newest = len(messages) - 1
    earlier = [i for i in range(newest - 1, -1, -1) if messages[i].get("role") == "user"]
    return [newest, *earlier[:1]]


def _mark_last_block(message: Message) -> None:
    content = message.get("content")
    if not isinstance(content, list):
        return
    for block in reversed(content):
        if not isinstance(block, dict) or block.get("type") in UNMARKABLE_BLOCKS:
            continue
        if block.get("type") == "text" and not block.get("text"):
            continue  # the API refuses cache_control on an empty text block
        block["cache_control"] = _ephemeral()
        return


# ---------------------------------------------------------------- failures


@dataclass(frozen=True)
class _Failure:
    """What went wrong in one attempt, as plain strings (never the SDK exception, which holds the request)."""

    retryable: bool
    reason: str
    final: str
    retry_after: float | None = None
    status: int | None = None
    error_type: str | None = None
    api_message: str = ""


class _IncompleteStream(Exception):
    """The stream ended without a stop reason."""


def one_line(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date), clamped to 0..60."""
    if headers is None:
        return None
    seconds: float | None = None
    millis = headers.get("retry-after-ms")
    raw = headers.get("retry-after")
    try:
        if millis is not None:
            seconds = float(millis) / 1000
        elif raw is not None:
            seconds = float(raw)
    except ValueError:
        seconds = None
    if seconds is None and raw:
        import email.utils  # only an HTTP-date retry-after needs it

        try:
            seconds = email.utils.parsedate_to_datetime(raw).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    if seconds is None:
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP)


def _error_fields(exc: Any) -> tuple[str | None, str]:
    """(error type, API message) of an SDK status error, across SDK versions."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    inner = inner if isinstance(inner, dict) else {}
    etype = getattr(exc, "type", None) or inner.get("type")
    message = getattr(exc, "api_message", None) or inner.get("message") or getattr(exc, "message", "") or str(exc)
    return (str(etype) if etype else None), str(message)


def _status_failure(exc: Any, attempts: int, endpoint: Endpoint) -> _Failure:
    status = int(getattr(exc, "status_code", 0) or 0)
    etype, message = _error_fields(exc)
    streaming = status < 400  # an `error` event inside a 200 stream
    retryable = status in RETRYABLE_STATUS or status >= 500 or (etype in RETRYABLE_TYPES)
    label = f"error event in stream ({etype})" if streaming else f"{status} {etype or 'error'}"
    request_id = getattr(exc, "request_id", None)
    hint = f" ({endpoint.auth_hint})" if status in (401, 403) else ""
    tail = f" [request {request_id}]" if request_id else ""
    gave_up = f" (gave up after {attempts} attempts)" if retryable else ""
    response = getattr(exc, "response", None)
    return _Failure(
        retryable=retryable,
        reason=one_line(f"{label}: {message}", 120),
        final=one_line(f"{_source(endpoint)} error {label}: {message}{hint}{gave_up}{tail}"),
        retry_after=parse_retry_after(getattr(response, "headers", None)),
        status=status or None,
        error_type=etype,
        api_message=one_line(message),
    )


def _source(endpoint: Endpoint) -> str:
    """Who refused: the Anthropic API, or the provider that answered."""
    return endpoint.label.removeprefix("the ")


def _root_cause(exc: BaseException) -> str:
    seen: set[int] = set()
    cause: BaseException = exc
    while id(cause) not in seen:
        seen.add(id(cause))
        nxt = cause.__cause__ or cause.__context__
        if nxt is None:
            break
        cause = nxt
    return one_line(str(cause) or type(cause).__name__, 160)


def _transport_errors() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = [_IncompleteStream, http_wire.WireError]
    for name in ("httpx2", "httpx"):
        module = sys.modules.get(name)
        if module is not None and isinstance(getattr(module, "TransportError", None), type):
            found.append(module.TransportError)
    return tuple(found)


# ---------------------------------------------------------------- the client


def warm_up(*, tls: bool = True) -> None:
    """Load what the first request to Anthropic's API needs (the CA store unless `tls` is off: an http:// base URL,
    the SDK's facts) and nothing it does not: a fork server's children and an interactive lead's first answer start
    warm."""
    sdk_facts.installed()
    if tls:
        shared_ssl_context()


class AnthropicClient:
    """`ModelClient` on the anthropic SDK: streams, retries transient failures, and reports usage."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        ledger: UsageLedger | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if not config.api_key and not config.auth_token and config.provider is None:
            raise MissingCredentialsError(NO_CREDENTIALS)
        self.config = config
        self.ledger = ledger  # when set, every successful call is recorded under `request.agent`
        self.sleep = sleep  # backoff waits go through here, so tests can record instead of waiting
        self._rng = rng or random.Random()
        self._sdks = SdkClients(config)  # Anthropic's API, or Bedrock / Vertex (model/providers.py)
        self.before_send: Callable[[], None] | None = None  # called as each request is about to go out

    def __repr__(self) -> str:
        return f"AnthropicClient({self.config!r})"

    def complete(self, request: ModelRequest, callbacks: StreamCallbacks | None = None) -> ModelResponse:
        """One model call, streamed; transient failures are retried, final ones raise `ModelAPIError`."""
        cb = callbacks or StreamCallbacks()
        diagnostics.stamp("params")
        params = build_params(request)
        attempt = 0
        while True:
            attempt += 1
            sent = time.monotonic()
            try:
                response = self._attempt(params, cb)
            except Exception as exc:
                failure = self._classify(exc, attempt)
                if failure is None:
                    raise
            else:
                response.api_ms = int((time.monotonic() - sent) * 1000)
                if self.ledger is not None:
                    self.ledger.record(request.agent, response.model, response.usage, response.api_ms)
                return response
            if not failure.retryable or attempt > self.config.max_retries:
                raise ModelAPIError(self._scrub(failure.final), status=failure.status, error_type=failure.error_type,
                                    api_message=self._scrub(failure.api_message))  # fmt: skip
            delay = self._delay(attempt, failure.retry_after)
            if cb.on_retry is not None:
                cb.on_retry(RetryNotice(attempt=attempt, delay=delay, reason=self._scrub(failure.reason)))
            self.sleep(delay)

    def close(self) -> None:
        """Close the SDK's HTTP connections, if a call ever opened them."""
        self._sdks.close()

    # -- internals

    def _attempt(self, params: dict[str, Any], cb: StreamCallbacks) -> ModelResponse:
        sdk, model = self._sdks.for_model(params["model"])
        diagnostics.stamp("sdk")
        if self.before_send is not None:
            self.before_send()
        if isinstance(sdk, FirstParty):  # Anthropic's API: the request is ours, the answer read by us (model/answer.py)
            answer = Answer(cb.on_text)
            request_id = sdk.answer({**params, "model": model}, cb.on_open, answer, cb.on_event)
            response = answer.response(request_id)
        else:  # Bedrock, Vertex: the SDK's own stream, in their protocols (no context_management: claude sends none)
            sent = {k: v for k, v in params.items() if k != "context_management"}
            with sdk.messages.stream(**{**sent, "model": model}) as stream:
                if cb.on_open is not None:
                    cb.on_open()
                for event in stream:
                    if event.type == "text" and cb.on_text is not None:
                        cb.on_text(event.text)
                message = stream.get_final_message()
                request_id = getattr(stream, "request_id", None) or getattr(message, "_request_id", None)
            response = _to_response(message, request_id) if message.stop_reason is not None else None
        if response is None:
            raise _IncompleteStream("the response stream ended before the message was complete")
        return response

    def _classify(self, exc: Exception, attempt: int) -> _Failure | None:
        """A `_Failure` for SDK and transport errors; None for anything else (re-raised as is)."""
        sdk = sys.modules.get("anthropic")  # loaded only if a provider's client (the SDK's own) was used
        if isinstance(exc, StatusError) or (sdk is not None and isinstance(exc, sdk.APIStatusError)):
            return _status_failure(exc, attempt, self._sdks.endpoint())
        if isinstance(exc, MalformedStream):  # an answer that broke mid-way: asked again, as a dropped connection
            where = self._sdks.endpoint()
            return _Failure(retryable=True, reason=f"a malformed answer: {exc}",
                            final=one_line(f"{where.label} at {where.url} kept sending malformed answers: {exc} "
                                           f"(gave up after {attempt} attempts)"))  # fmt: skip
        connection = sdk is not None and isinstance(exc, sdk.APIConnectionError)
        if connection or isinstance(exc, _transport_errors()):
            cause, where = _root_cause(exc), self._sdks.endpoint()
            return _Failure(retryable=True, reason=f"connection error: {cause}",
                            final=one_line(f"cannot reach {where.label} at {where.url}: {cause} (gave up after "
                                           f"{attempt} attempts; {where.check})"))  # fmt: skip
        if sdk is not None and isinstance(exc, sdk.AnthropicError):
            return _Failure(retryable=False, reason=one_line(str(exc)), final=one_line(f"Anthropic SDK error: {exc}"))
        return None

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        base = min(BACKOFF_CAP, BACKOFF_BASE * 2.0 ** (attempt - 1))
        return base * (1 - 0.25 * self._rng.random())  # jitter: 75-100 % of the exponential step

    def _scrub(self, text: str) -> str:
        for secret in self.config.secrets():
            if len(secret) >= MIN_SCRUB_CHARS:  # a one-letter test key must not mangle every message
                text = text.replace(secret, "***")
        return text


def _to_response(message: Any, request_id: str | None) -> ModelResponse:
    usage = message.usage
    return ModelResponse(
        content=[_block_dict(block) for block in message.content],
        stop_reason=str(message.stop_reason),
        usage=Usage(
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_creation_input_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
            cache_read_input_tokens=getattr(usage, "cache_read_input_tokens", None) or 0,
        ),
        model=str(message.model), request_id=request_id, message_id=str(message.id),
    )  # fmt: skip


def _block_dict(block: Any) -> Block:
    """An SDK content block as a plain dict in the API's own shape."""
    if block.type == "text":
        out: Block = {"type": "text", "text": block.text}
        if getattr(block, "citations", None):
            out["citations"] = [c.model_dump(mode="json", exclude_none=True) for c in block.citations]
        return out
    if block.type == "tool_use":
        tool_input = block.input if isinstance(block.input, dict) else {}
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(tool_input)}
    dumped: Block = block.model_dump(mode="json", exclude_none=True)
    dumped.pop("parsed_output", None)
    return dumped
