"""`--fallback-model`: a model client that asks a second model once when the first stays overloaded after its
retries (HTTP 529 / `overloaded_error`), as Claude Code's -p does."""

from __future__ import annotations

import dataclasses

from agentteams.model.anthropic_client import ModelAPIError
from agentteams.model.types import ModelClient, ModelRequest, ModelResponse, StreamCallbacks


class FallbackClient:
    """`ModelClient` over `inner`: a request whose model is overloaded for good goes once to `fallback` (a full id)."""

    def __init__(self, inner: ModelClient, fallback: str) -> None:
        self.inner = inner
        self.fallback = fallback

    def complete(self, request: ModelRequest, callbacks: StreamCallbacks | None = None) -> ModelResponse:
        try:
            return self.inner.complete(request, callbacks)
        except ModelAPIError as e:
            overloaded = e.status == 529 or e.error_type == "overloaded_error"
            if not overloaded or request.model == self.fallback:
                raise
        return self.inner.complete(dataclasses.replace(request, model=self.fallback), callbacks)
