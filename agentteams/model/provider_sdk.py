"""The SDK client each request goes through: `anthropic.Anthropic`, or the SDK's own `AnthropicBedrock` /
`AnthropicVertex` (optional extras), one per region, built on first use; and where that client sends requests."""

from __future__ import annotations

import importlib
import json
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from agentteams.errors import AgentTeamsError
from agentteams.model import wire_body as wirebody
from agentteams.model.answer import Answer
from agentteams.model.config import ModelConfig
from agentteams.model.providers import ProviderConfig, ProviderError, missing_extra
from agentteams.model.urls import display_url

DEFAULT_BASE_URL = "https://api.anthropic.com"
APP_HEADERS = {"x-app": "agentteams"}
STREAM_HEADERS = {"x-stainless-helper-method": "stream", "x-stainless-stream-helper": "messages"}  # as the SDK's
_SSL_CONTEXT: Any = None


class ProviderAuthError(AgentTeamsError):
    """The provider's credentials could not be found or used (no AWS credentials, no Google ADC)."""


@dataclass(frozen=True)
class Endpoint:
    """Where requests went, for messages: "the Anthropic API" at its URL, or a provider at its."""

    label: str
    url: str
    check: str  # what to check when it cannot be reached
    auth_hint: str  # what to check when it refuses the credentials


def shared_ssl_context() -> Any:
    """One TLS context per process (loading the CA store costs ~30 ms per client); a fork server warms it,
    so a forked teammate's first request does not pay for it."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        import ssl

        _SSL_CONTEXT = ssl.create_default_context()
    return _SSL_CONTEXT


def wire_for(sdk: Any) -> _Wire | None:
    """How `sdk`'s Messages requests go when it is first-party (`first_party`); None for Bedrock and Vertex clients,
    which rewrite the body and URL from its fields: their stream is the SDK's own (`messages.stream`)."""
    return _WIRES.get(sdk)


def first_party(sdk: Any, http: Any) -> Any:
    """`sdk` (an `anthropic.Anthropic` built on the httpx client `http`), its Messages requests sent by `_Wire`."""
    _WIRES[sdk] = _Wire(sdk, http)
    return sdk


class _Wire:
    """A first-party Messages request as the SDK's own `post` makes it (the same headers, URL, timeout and httpx
    client, its status errors), its answer read by us (model/answer.py). The body is JSON bytes of ours
    (model/wire_body.py): the SDK's own path deep-copies the whole conversation and encodes the copy (~1.5 ms a request
    at 20 KB), and merges, validates and parses its headers, URL and options anew each time (~0.5 ms more)."""

    def __init__(self, sdk: Any, http: Any) -> None:
        self.sdk, self.http = sdk, http
        self._fixed: tuple[dict[str, str], str] | None = None  # headers, URL: built on the first request

    def answer(self, params: dict[str, Any], on_open: Callable[[], None] | None, answer: Answer) -> str | None:
        """Send `params`, feed the answer's events to `answer` as they arrive; the response's request id. An `error`
        event is the SDK's own status error for it, as its stream raises."""
        from anthropic._streaming import SSEDecoder

        body = wirebody.body({k: v for k, v in params.items() if k != "extra_headers"})
        response = self._send(body, params.get("extra_headers"))
        try:
            if on_open is not None:
                on_open()
            for sse in SSEDecoder().iter_bytes(response.iter_bytes()):
                if sse.event is None or sse.event == "ping":
                    continue
                if sse.event == "error":
                    raise self._error_event(sse.data, response)
                if sse.data:
                    answer.feed(json.loads(sse.data))
        finally:
            response.close()
        return cast("str | None", response.headers.get("request-id"))

    def _send(self, body: bytes, extra: dict[str, str] | None) -> Any:
        headers, url = self._fixed or self._build()
        request = self.http.build_request("POST", url, content=body, headers={**headers, **extra} if extra else headers,
                                          timeout=self.sdk.timeout)  # fmt: skip
        response = self.http.send(request, stream=True)
        if response.status_code >= 400:
            response.read()  # the SDK's error carries the body: read it before the response is closed
            response.close()
            raise self.sdk._make_status_error_from_response(response)  # the SDK's own error for each status
        return response

    def _error_event(self, data: str, response: Any) -> Exception:
        body: Any = data
        try:
            body = json.loads(data)
            message = f"{body}"
        except ValueError:
            message = data or f"Error code: {response.status_code}"
        return cast(Exception, self.sdk._make_status_error(message, body=body, response=response))

    def _build(self) -> tuple[dict[str, str], str]:
        from anthropic import NOT_GIVEN

        sdk = self.sdk
        timeout = sdk.timeout
        read = str(timeout.read if hasattr(timeout, "read") else timeout)
        # as the SDK's `messages.stream` sends them: it gives no per-request timeout, and names that (NOT_GIVEN); our
        # own retries resend with the count at 0, as the SDK's does with its own retries off
        per_request = {"x-stainless-timeout": str(NOT_GIVEN), "x-stainless-retry-count": "0",
                       "x-stainless-read-timeout": read}  # fmt: skip
        # an Omit value (the SDK's "leave this header out") is not sent
        headers = {
            k: v for k, v in {**per_request, **sdk.default_headers, **STREAM_HEADERS}.items() if isinstance(v, str)
        }
        self._fixed = headers, str(sdk.base_url).rstrip("/") + "/v1/messages"
        return self._fixed


_WIRES: weakref.WeakKeyDictionary[Any, _Wire] = weakref.WeakKeyDictionary()


class SdkClients:
    """The SDK clients of one `ModelConfig`: which client (and which model id) a request for a model uses."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._clients: dict[str | None, Any] = {}  # by region (None: Anthropic's API)
        self._last: str | None = None  # the region of the latest request

    def for_model(self, model: str) -> tuple[Any, str]:
        """(SDK client, model id to send) for a request for `model`."""
        provider = self.config.provider
        region = None if provider is None else provider.region_for(model)
        with self._lock:
            self._last = region
            client = self._clients.get(region)
            if client is None:
                client = self._clients[region] = _build(self.config, region)
        return client, model if provider is None else provider.model_id(model)

    def endpoint(self) -> Endpoint:
        """Where the latest request went (or would go)."""
        provider = self.config.provider
        if provider is None:
            auth = "check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN"
            url = display_url(self.config.base_url or DEFAULT_BASE_URL)
            return Endpoint("the Anthropic API", url, "check ANTHROPIC_BASE_URL and the network", auth)
        url = provider.endpoint(self._last or provider.region)
        return Endpoint(provider.label, url, provider.where(), provider.auth_hint())

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()


def _build(cfg: ModelConfig, region: str | None) -> Any:
    import anthropic  # the SDK costs ~2.6 s to import: only a real model call pays for it

    http = anthropic.DefaultHttpxClient(verify=shared_ssl_context())
    common: dict[str, Any] = {"timeout": cfg.timeout, "max_retries": 0, "http_client": http}
    provider = cfg.provider
    if provider is None or region is None:
        credential = {"api_key": cfg.api_key} if cfg.api_key else {"auth_token": cfg.auth_token}
        headers = _auth_headers(cfg, anthropic.Omit())
        return first_party(
            anthropic.Anthropic(**credential, base_url=cfg.base_url, default_headers=headers, **common), http
        )
    _import_extra(provider)
    if provider.kind == "bedrock":
        return _bedrock_class(provider)(**_bedrock_args(provider, region), default_headers=APP_HEADERS, **common)
    from anthropic import AnthropicVertex

    return _guarded(AnthropicVertex, provider)(
        region=region, project_id=provider.project_id, base_url=provider.base_url, default_headers=APP_HEADERS,
        **common,
    )  # fmt: skip


def _auth_headers(cfg: ModelConfig, omit: Any) -> dict[str, Any]:
    """Our headers; an API key goes in `x-api-key` (as Claude Code sends it, and as gateways expect) even
    where the SDK would send it as `Authorization: Bearer`; an auth token stays a bearer token."""
    if not cfg.api_key:
        return dict(APP_HEADERS)
    return {**APP_HEADERS, "x-api-key": cfg.api_key, "Authorization": omit}


def _import_extra(provider: ProviderConfig) -> None:
    """Import what the SDK's provider client imports only when it first signs or decodes: a missing extra is one
    line now, not an ImportError in the middle of a request."""
    if provider.kind == "vertex" and provider.skip_auth:
        return  # behind a gateway Vertex needs no Google credentials
    # Bedrock: SigV4 signing and the streamed response's framing; Vertex: Google's credentials
    names = ("botocore.auth", "botocore.eventstream") if provider.kind == "bedrock" else ("google.auth",)
    try:
        for name in names:
            importlib.import_module(name)
    except ImportError:
        raise ProviderError(missing_extra(provider)) from None


def _bedrock_args(provider: ProviderConfig, region: str) -> dict[str, Any]:
    """The Bedrock client's credentials, from our environment: a Bedrock API key, else AWS keys, else a profile,
    else boto3's own chain (~/.aws, SSO, instance roles)."""
    args: dict[str, Any] = {"aws_region": region, "base_url": provider.base_url}
    if provider.skip_auth:
        return args
    if provider.bearer_token:
        return {**args, "api_key": provider.bearer_token}
    if provider.aws_access_key or provider.aws_secret_key:
        return {**args, "aws_access_key": provider.aws_access_key, "aws_secret_key": provider.aws_secret_key,
                "aws_session_token": provider.aws_session_token}  # fmt: skip
    return {**args, "aws_profile": provider.aws_profile} if provider.aws_profile else args


def _bedrock_class(provider: ProviderConfig) -> Any:
    from anthropic import AnthropicBedrock

    return _guarded(AnthropicBedrock, provider)


def _guarded(base: Any, provider: ProviderConfig) -> Any:
    """`base` whose request signing is skipped behind a gateway (CLAUDE_CODE_SKIP_*_AUTH), and whose failure to
    find credentials is one line of ours instead of a library's exception from inside the request."""

    class Guarded(base):  # type: ignore[misc]
        def _prepare_request(self, request: Any) -> None:
            if provider.skip_auth:
                return
            try:
                super()._prepare_request(request)
            except ImportError:
                raise ProviderError(missing_extra(provider)) from None
            except Exception as e:
                detail = " ".join(str(e).split())[:200] or type(e).__name__
                hint = provider.auth_hint()
                raise ProviderAuthError(f"{provider.label}: no usable credentials ({detail}); {hint}") from None

    Guarded.__name__ = Guarded.__qualname__ = base.__name__
    return Guarded
