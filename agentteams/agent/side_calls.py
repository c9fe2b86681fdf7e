"""Side calls a tool makes to the model (WebFetch's small model over a page, WebSearch's search request): one
request through the session's client, its usage counted in the session's ledger under the calling agent."""

from __future__ import annotations

from collections.abc import Callable

from agentteams.model.pricing import UsageLedger
from agentteams.model.types import ModelClient, ModelRequest, ModelResponse


def side_caller(client: ModelClient, ledger: UsageLedger, agent: str) -> Callable[[ModelRequest], ModelResponse]:
    def call(request: ModelRequest) -> ModelResponse:
        response = client.complete(request)
        ledger.record(agent, request.model, response.usage)
        return response

    return call
