"""`ModelConfig`: credentials, base URL, timeout and retry budget for the model client, read from the environment.

Its repr masks every secret; its errors are one line and never contain a key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentteams.errors import AgentTeamsError
from agentteams.model.urls import check_base_url

if TYPE_CHECKING:
    from agentteams.model.providers import ProviderConfig

DEFAULT_TIMEOUT = 600.0  # seconds, as the SDK's own default
DEFAULT_MAX_RETRIES = 5  # retries after the first attempt: six attempts in all


NO_CREDENTIALS = (
    "no Anthropic API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or run `agentteams demo` to try it offline"
)


class MissingCredentialsError(AgentTeamsError):
    """Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set."""


@dataclass(frozen=True)
class ModelConfig:
    """How to reach the Messages API. Build it with `from_env()`; never print the secrets it holds."""

    api_key: str | None = field(default=None, repr=False)
    auth_token: str | None = field(default=None, repr=False)
    base_url: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    provider: ProviderConfig | None = None  # Amazon Bedrock, Google Vertex AI, ... instead of Anthropic's API
    headers: tuple[tuple[str, str], ...] = ()  # sent with every request (a hosted provider's workspace)

    def __repr__(self) -> str:
        return (
            f"ModelConfig(api_key={_mask(self.api_key)}, auth_token={_mask(self.auth_token)}, "
            f"base_url={self.base_url!r}, timeout={self.timeout!r}, max_retries={self.max_retries!r}, "
            f"provider={self.provider!r})"
        )

    __str__ = __repr__

    def secrets(self) -> list[str]:
        """The secret strings this config holds, so messages can be scrubbed of them."""
        own = [s for s in (self.api_key, self.auth_token) if s]
        return own + (self.provider.secrets() if self.provider is not None else [])

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ModelConfig:
        """Read ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL (and API_TIMEOUT_MS,
        CLAUDE_CODE_MAX_RETRIES, as Claude Code); or, with CLAUDE_CODE_USE_BEDROCK / _VERTEX, that provider's."""
        from agentteams.model.providers import ProviderConfig

        environ = os.environ if env is None else env
        provider = ProviderConfig.from_env(environ)
        if provider is not None:  # the provider's own credentials: an Anthropic key is neither needed nor sent
            return cls(timeout=_timeout(environ), max_retries=_max_retries(environ), provider=provider)
        api_key = environ.get("ANTHROPIC_API_KEY", "").strip() or None
        auth_token = environ.get("ANTHROPIC_AUTH_TOKEN", "").strip() or None
        if api_key is None and auth_token is None:
            raise MissingCredentialsError(NO_CREDENTIALS)
        raw_url = environ.get("ANTHROPIC_BASE_URL", "").strip()
        base_url = check_base_url(raw_url) if raw_url else None
        return cls(
            api_key=api_key, auth_token=auth_token, base_url=base_url, timeout=_timeout(environ),
            max_retries=_max_retries(environ),
        )  # fmt: skip


def _mask(secret: str | None) -> str:
    return "None" if secret is None else "'***'"


def _max_retries(environ: Mapping[str, str]) -> int:
    """CLAUDE_CODE_MAX_RETRIES, as Claude Code reads it; our default otherwise."""
    raw = environ.get("CLAUDE_CODE_MAX_RETRIES", "").strip()
    return int(raw) if raw.isdigit() else DEFAULT_MAX_RETRIES


def _timeout(environ: Mapping[str, str]) -> float:
    raw = environ.get("API_TIMEOUT_MS", "").strip()
    try:
        millis = float(raw)
    except ValueError:
        return DEFAULT_TIMEOUT
    return millis / 1000 if millis > 0 else DEFAULT_TIMEOUT
