"""The client each request goes through: Anthropic's API without the SDK (model/first_party.py), at Anthropic's or a
provider that hosts it (Foundry, Mantle, Claude Platform on AWS / Google Cloud), or the SDK's `AnthropicBedrock` /
`AnthropicVertex` (optional extras), one per region, built on first use; and where that client sends requests."""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, replace
from typing import Any

from agentteams.errors import AgentTeamsError
from agentteams.model.config import ModelConfig
from agentteams.model.first_party import APP_HEADERS, DEFAULT_BASE_URL, FirstParty, shared_ssl_context
from agentteams.model.providers import HOSTED, ProviderConfig, ProviderError, missing_extra
from agentteams.model.urls import display_url


class ProviderAuthError(AgentTeamsError):
    """The provider's credentials could not be found or used (no AWS credentials, no Google ADC)."""


@dataclass(frozen=True)
class Endpoint:
    """Where requests went, for messages: "the Anthropic API" at its URL, or a provider at its."""

    label: str
    url: str
    check: str  # what to check when it cannot be reached
    auth_hint: str  # what to check when it refuses the credentials


class SdkClients:
    """The clients of one `ModelConfig`: which client (and which model id) a request for a model uses: a `FirstParty`
    for Anthropic's API, an SDK client for a provider's region."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._clients: dict[str | None, Any] = {}  # by region (None: Anthropic's API)
        self._last: str | None = None  # the region of the latest request

    def for_model(self, model: str) -> tuple[Any, str]:
        """(client, model id to send) for a request for `model`."""
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
    provider = cfg.provider
    if provider is None or region is None:
        return FirstParty(cfg)  # no SDK import: its ~1 s is off every first answer's path
    if provider.kind in HOSTED:  # Anthropic's API at the provider's address, with its credential
        hosted = replace(cfg, api_key=provider.api_key, auth_token=provider.bearer_token, base_url=provider.base_url,
                         provider=None, headers=provider.headers)  # fmt: skip
        return FirstParty(hosted)
    import anthropic  # a provider's client is the SDK's own: it signs (Bedrock) and authenticates (Vertex)

    common: dict[str, Any] = {"timeout": cfg.timeout, "max_retries": 0,
                              "http_client": anthropic.DefaultHttpxClient(verify=shared_ssl_context())}  # fmt: skip
    _import_extra(provider)
    if provider.kind == "bedrock":
        return _bedrock_class(provider)(**_bedrock_args(provider, region), default_headers=APP_HEADERS, **common)
    from anthropic import AnthropicVertex

    return _guarded(AnthropicVertex, provider)(
        region=region, project_id=provider.project_id, base_url=provider.base_url, default_headers=APP_HEADERS,
        **common,
    )  # fmt: skip


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
