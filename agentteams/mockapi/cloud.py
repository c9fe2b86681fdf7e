"""The cloud providers' routes to the scripted model: Amazon Bedrock's `/model/{id}/invoke[-with-response-stream]`
and Google Vertex AI's `.../publishers/anthropic/models/{id}:[stream]rawPredict`, each turned into a Messages
request; the call records the model id, region, project and auth scheme it came with (never a credential)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Literal
from urllib.parse import unquote

Cloud = Literal["bedrock", "vertex"]
_BEDROCK = re.compile(r"/model/(?P<model>[^/]+)/(?P<op>invoke|invoke-with-response-stream)$")
_VERTEX = re.compile(
    r"/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/anthropic/models/"
    r"(?P<model>[^/:]+):(?P<op>rawPredict|streamRawPredict)$"
)
_SIGV4_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request")


@dataclass(frozen=True)
class CloudCall:
    """What a provider route named: the model id (from the path), region, project, and how it authenticated."""

    cloud: Cloud
    model: str
    stream: bool
    region: str | None
    project: str | None
    auth: str  # "sigv4" (with `service`), "bearer" or "none"
    service: str | None = None

    def record(self) -> dict[str, Any]:
        return asdict(self)


def parse(path: str, headers: dict[str, str]) -> CloudCall | None:
    """The provider call a POST path makes (any prefix before the route: a gateway's), or None."""
    auth, region, service = _auth({k.lower(): v for k, v in headers.items()})
    found = _BEDROCK.search(path)
    if found is not None:
        stream = found["op"] == "invoke-with-response-stream"
        return CloudCall("bedrock", unquote(found["model"]), stream, region, None, auth, service)
    found = _VERTEX.search(path)
    if found is not None:
        stream = found["op"] == "streamRawPredict"
        return CloudCall("vertex", unquote(found["model"]), stream, unquote(found["region"]),
                         unquote(found["project"]), auth)  # fmt: skip
    return None


def _auth(headers: dict[str, str]) -> tuple[str, str | None, str | None]:
    value = headers.get("authorization", "")
    if value.startswith("AWS4-HMAC-SHA256"):
        scope = _SIGV4_SCOPE.search(value)
        return "sigv4", scope["region"] if scope else None, scope["service"] if scope else None
    return ("bearer" if value.lower().startswith("bearer ") else "none"), None, None


def messages_body(call: CloudCall, body: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(the Messages request the provider call stands for, None) or (None, why the provider would refuse it):
    the model is in the path and must not be in the body, and the body names the API version (the providers take
    it there, in place of the `anthropic-version` header; which one is the SDK's business)."""
    if not isinstance(body, dict):
        return None, "request body must be a JSON object"
    if call.cloud == "bedrock" and "model" in body:
        return None, "extraneous key [model] is not permitted"
    version = body.get("anthropic_version")
    if not isinstance(version, str) or not version:
        return None, "anthropic_version: Field required"
    return {**body, "model": call.model, "stream": call.stream}, None
