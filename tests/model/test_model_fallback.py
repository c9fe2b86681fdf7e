"""FallbackClient: only an overload that outlasted the retries goes to the fallback model, and only once."""

from __future__ import annotations

import pytest

from agentteams.model.anthropic_client import ModelAPIError
from agentteams.model.fallback import FallbackClient
from agentteams.model.types import ModelRequest, ModelResponse, StreamCallbacks, Usage


class Inner:
    """Fails with `error` for every model in `failing`; records the models asked."""

    def __init__(self, error: ModelAPIError, failing: set[str]) -> None:
        self.error, self.failing, self.asked = error, failing, list[str]()

    def complete(self, request: ModelRequest, callbacks: StreamCallbacks | None = None) -> ModelResponse:
        self.asked.append(request.model)
        if request.model in self.failing:
            raise self.error
        return ModelResponse(
            content=[{"type": "text", "text": request.model}],
            stop_reason="end_turn",
            usage=Usage(),
            model=request.model,
        )


def request(model: str = "main-model") -> ModelRequest:
    return ModelRequest(model=model, system="s", tools=[], messages=[{"role": "user", "content": "hi"}])


OVERLOADED = ModelAPIError("overloaded", status=529, error_type="overloaded_error")


def test_an_overloaded_model_is_asked_again_once_on_the_fallback() -> None:
    inner = Inner(OVERLOADED, {"main-model"})
    response = FallbackClient(inner, "spare-model").complete(request())
    assert response.content == [{"type": "text", "text": "spare-model"}] and inner.asked == [
        "main-model",
        "spare-model",
    ]


@pytest.mark.parametrize(
    ("error", "failing", "model"),
    [
        (ModelAPIError("bad request", status=400, error_type="invalid_request_error"), {"main-model"}, "main-model"),
        (OVERLOADED, {"main-model", "spare-model"}, "main-model"),  # the fallback overloaded too: no third try
        (OVERLOADED, {"spare-model"}, "spare-model"),  # already on the fallback model
    ],
)
def test_other_failures_are_not_retried_elsewhere(error: ModelAPIError, failing: set[str], model: str) -> None:
    inner = Inner(error, failing)
    with pytest.raises(ModelAPIError):
        FallbackClient(inner, "spare-model").complete(request(model))
    assert len(inner.asked) <= 2 and inner.asked.count("spare-model") <= 1
