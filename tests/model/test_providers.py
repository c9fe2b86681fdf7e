"""Providers (issue 13, item 5): Claude Code's Bedrock and Vertex variables, its model-id mapping, the one-line
refusals, the AWS event-stream framing of the mock against botocore's decoder, and the SDK's own Bedrock and Vertex
clients (driven by our model client) against the scripted server standing in for each endpoint."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentteams.backends.tmux import build_command_line
from agentteams.mockapi import MockServer
from agentteams.mockapi.eventstream import encode
from agentteams.model.aliases import resolve_model
from agentteams.model.anthropic_client import AnthropicClient, ModelAPIError
from agentteams.model.config import MissingCredentialsError, ModelConfig
from agentteams.model.provider_sdk import ProviderAuthError
from agentteams.model.providers import ProviderConfig, ProviderError, describe
from agentteams.model.types import ModelRequest
from agentteams.model.urls import BadBaseURLError
from agentteams.procs.fork.server import carried_credentials
from agentteams.team.spawn.base import teammate_env

SECRET = "aws-secret-0123456789abcdefSECRET"
TOKEN = "aws-session-token-0123456789TOKEN"
BEARER = "bedrock-api-key-0123456789BEARER"
ANSWER = "ANSWER-FROM-THE-CLOUD"
PROVIDER_VARS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "AWS_REGION", "AWS_DEFAULT_REGION",
                 "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_BEARER_TOKEN_BEDROCK", "CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID",
                 "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_MODEL")  # fmt: skip


@pytest.fixture(autouse=True)
def no_cloud_setup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No provider variable, no ~/.aws and no instance metadata from the machine running the tests."""
    for name in PROVIDER_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def bedrock_env(**extra: str) -> dict[str, str]:
    return {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": SECRET,
            **extra}  # fmt: skip


def vertex_env(**extra: str) -> dict[str, str]:
    return {"CLAUDE_CODE_USE_VERTEX": "1", "ANTHROPIC_VERTEX_PROJECT_ID": "proj-7", "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1",
            **extra}  # fmt: skip


def provider(env: dict[str, str]) -> ProviderConfig:
    config = ProviderConfig.from_env(env)
    assert config is not None
    return config


# ---------------------------------------------------------------- the variables


@pytest.mark.parametrize("value", ["", "0", "false", "no"])
def test_without_a_provider_variable_the_anthropic_api_needs_its_key(value: str) -> None:
    env = {"CLAUDE_CODE_USE_BEDROCK": value, "CLAUDE_CODE_USE_VERTEX": value}
    assert ProviderConfig.from_env(env) is None
    with pytest.raises(MissingCredentialsError):
        ModelConfig.from_env(env)


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
def test_a_provider_needs_no_anthropic_key_and_sends_none(value: str) -> None:
    config = ModelConfig.from_env({**bedrock_env(), "CLAUDE_CODE_USE_BEDROCK": value, "ANTHROPIC_API_KEY": "sk-x"})
    assert config.provider is not None and config.provider.kind == "bedrock"
    assert config.api_key is None and config.auth_token is None  # Claude Code ignores it with Bedrock too


@pytest.mark.parametrize(
    ("env", "region"),
    [({"AWS_REGION": "eu-west-3", "AWS_DEFAULT_REGION": "us-west-2"}, "eu-west-3"),
     ({"AWS_DEFAULT_REGION": "us-west-2"}, "us-west-2"), ({}, "us-east-1"),
     ({"AWS_REGION": "us-gov-west-1"}, "us-gov-west-1")],
)  # fmt: skip
def test_bedrock_region_as_claude_code_reads_it(env: dict[str, str], region: str) -> None:
    config = provider(bedrock_env(**env))
    assert config.region == region
    assert config.endpoint(region) == f"https://bedrock-runtime.{region}.amazonaws.com"


def test_bedrock_wins_when_both_are_set_and_vertex_defaults_to_us_east5() -> None:
    assert provider({**bedrock_env(), **vertex_env()}).kind == "bedrock"
    config = provider(vertex_env())
    assert (config.kind, config.region, config.project_id) == ("vertex", "us-east5", "proj-7")
    assert config.endpoint("us-east5") == "https://us-east5-aiplatform.googleapis.com/v1"
    assert config.endpoint("global") == "https://aiplatform.googleapis.com/v1"


@pytest.mark.parametrize(
    ("env", "named"),
    [(bedrock_env(AWS_REGION="moon base"), "AWS_REGION 'moon base' is not an AWS region"),
     (bedrock_env(AWS_DEFAULT_REGION="useast1"), "AWS_DEFAULT_REGION 'useast1' is not an AWS region"),
     (vertex_env(CLOUD_ML_REGION="us_east5"), "CLOUD_ML_REGION 'us_east5' is not a Vertex AI region"),
     (vertex_env(VERTEX_REGION_CLAUDE_4_6_SONNET="?"), "VERTEX_REGION_CLAUDE_4_6_SONNET '?' is not a Vertex AI"),
     ({"CLAUDE_CODE_USE_VERTEX": "1"}, "ANTHROPIC_VERTEX_PROJECT_ID is not"),
     (bedrock_env(ANTHROPIC_BEDROCK_BASE_URL="bedrock.local"), "ANTHROPIC_BEDROCK_BASE_URL 'bedrock.local' is not")],
)  # fmt: skip
def test_a_bad_setting_is_one_line_naming_its_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises((ProviderError, BadBaseURLError)) as caught:
        ModelConfig.from_env(env)
    assert named in str(caught.value) and "\n" not in str(caught.value)


# ---------------------------------------------------------------- model ids


@pytest.mark.parametrize(
    ("model", "bedrock", "vertex"),
    [("sonnet", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-5-5"),
     ("default", "us.anthropic.claude-opus-5-5", "claude-opus-5-5"),
     ("opus", "us.anthropic.claude-opus-5-5", "claude-opus-5-5"),
     ("haiku", "us.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5@20251001"),
     ("fable", "us.anthropic.claude-fable-5-2", "claude-fable-5-2"),
     ("opusplan", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-5-5"),
     ("claude-sonnet-4-6", "us.anthropic.claude-sonnet-4-6", "claude-sonnet-4-6"),
     ("claude-opus-4-8", "us.anthropic.claude-opus-4-8", "claude-opus-4-8"),
     ("claude-opus-4-1-20250805", "us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1@20250805"),
     # an undated name of a model published with a date is sent as given (2.1.332, every provider)
     ("claude-sonnet-4-5", "claude-sonnet-4-5", "claude-sonnet-4-5"),
     ("claude-opus-4", "claude-opus-4", "claude-opus-4")],
)  # fmt: skip
def test_aliases_and_our_ids_map_as_claude_code_maps_them(model: str, bedrock: str, vertex: str) -> None:
    """On a provider the aliases name the models Claude Code 2.1.332 gives them there (model/catalog.py; the whole
    table, every provider, against the real CLIs: tests/interop/test_interop_aliases.py)."""
    for env, expected in ((bedrock_env(), bedrock), (vertex_env(), vertex)):
        assert provider(env).model_id(resolve_model(model, env)) == expected
    assert resolve_model("sonnet", {}) == "claude-sonnet-5-5"  # first-party: unchanged


@pytest.mark.parametrize(
    ("region", "geography"),
    [("us-east-1", "us"), ("us-west-2", "us"), ("us-gov-west-1", "us-gov"), ("eu-west-3", "eu"),
     ("eu-central-1", "eu"), ("ap-southeast-2", "apac"), ("ap-northeast-1", "apac"), ("ca-central-1", "global"),
     ("sa-east-1", "global")],
)  # fmt: skip
def test_bedrock_ids_use_the_inference_profile_of_the_regions_geography(region: str, geography: str) -> None:
    config = provider(bedrock_env(AWS_REGION=region))
    assert config.model_id("claude-haiku-4-5-20251001") == f"{geography}.anthropic.claude-haiku-4-5-20251001-v1:0"
    assert resolve_model("haiku", bedrock_env(AWS_REGION=region)) == config.model_id("claude-haiku-4-5-20251001")


@pytest.mark.parametrize(
    "model",
    ["global.anthropic.claude-sonnet-4-5-20250929-v1:0", "eu.anthropic.claude-haiku-4-5-20251001-v1:0",
     "arn:aws:bedrock:us-east-2:111122223333:application-inference-profile/a1b2c3", "claude-opus-4-1@20250805"],
)  # fmt: skip
def test_a_provider_id_passes_through(model: str) -> None:
    assert provider(bedrock_env()).model_id(resolve_model(model, bedrock_env())) == model
    assert provider(vertex_env()).model_id(model) == model
    override = resolve_model("sonnet", bedrock_env(ANTHROPIC_DEFAULT_SONNET_MODEL=model))  # as Claude Code's docs pin
    assert provider(bedrock_env()).model_id(override) == model


def test_vertex_region_per_model_overrides_the_default() -> None:
    config = provider(vertex_env(CLOUD_ML_REGION="global", VERTEX_REGION_CLAUDE_HAIKU_4_5="europe-west1"))
    assert config.region_for("claude-haiku-4-5") == "europe-west1"
    assert config.region_for("claude-sonnet-4-6") == "global"
    assert config.region_for("claude-haiku-4-5@20251001") == "europe-west1"  # its Vertex id, given as it is
    assert config.region_for("claude-opus-4-1@20250805") == "global"
    assert provider(bedrock_env()).region_for("claude-haiku-4-5") == "us-east-1"


# ---------------------------------------------------------------- secrets


def test_aws_credentials_are_secrets_kept_out_of_repr_argv_and_pane_environments() -> None:
    env = bedrock_env(AWS_SESSION_TOKEN=TOKEN)
    config = ModelConfig.from_env(env)
    assert set(config.secrets()) == {SECRET, TOKEN}
    assert SECRET not in repr(config) and TOKEN not in repr(config) and "AKIDEXAMPLE" not in repr(config)
    assert provider(bedrock_env(AWS_BEARER_TOKEN_BEDROCK=BEARER)).secrets() == [SECRET, BEARER]
    for name in ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID"):
        with pytest.raises(ValueError, match=name):
            build_command_line(["agentteams"], Path("/"), {name: "x"})


def test_teammates_get_the_provider_variables_and_the_fork_server_carries_the_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lead = {**vertex_env(CLOUD_ML_REGION="europe-west1", VERTEX_REGION_CLAUDE_4_6_SONNET="global"), **bedrock_env()}
    for name, value in lead.items():
        monkeypatch.setenv(name, value)
    env = teammate_env({})
    assert {k: env[k] for k in lead if k in env} == {k: v for k, v in lead.items() if not k.startswith("AWS_")}
    assert "AWS_SECRET_ACCESS_KEY" not in env and "AWS_ACCESS_KEY_ID" not in env  # they would be in tmux's argv
    server = {"ANTHROPIC_API_KEY": "sk-lead", "AWS_ACCESS_KEY_ID": "AKIDLEAD", "AWS_SECRET_ACCESS_KEY": SECRET}
    assert carried_credentials({}, server) == server
    # a pane with an Anthropic key of its own still gets the lead's AWS keys, and one with its own AWS keys keeps them
    assert carried_credentials({"ANTHROPIC_API_KEY": "sk-pane"}, server) == {
        "AWS_ACCESS_KEY_ID": "AKIDLEAD", "AWS_SECRET_ACCESS_KEY": SECRET}  # fmt: skip
    assert carried_credentials({"AWS_PROFILE": "p", "AWS_ACCESS_KEY_ID": "AKIDPANE"}, server) == {
        "ANTHROPIC_API_KEY": "sk-lead"}  # fmt: skip


# ---------------------------------------------------------------- optional extras


def test_a_missing_extra_is_one_line_naming_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "botocore", None)  # as if boto3 were not installed
    monkeypatch.setitem(sys.modules, "google.auth", None)
    with pytest.raises(ProviderError, match=r"^CLAUDE_CODE_USE_BEDROCK is set but the AWS SDK \(boto3\) is not "
                       r"installed: pip install 'agentteams\[bedrock\]'$"):  # fmt: skip
        ModelConfig.from_env(bedrock_env())
    with pytest.raises(ProviderError, match=r"pip install 'agentteams\[vertex\]'$"):
        ModelConfig.from_env({**vertex_env(), "CLAUDE_CODE_SKIP_VERTEX_AUTH": "0"})
    assert ModelConfig.from_env(vertex_env()).provider is not None  # behind a gateway Vertex needs no google-auth


def test_an_extra_that_fails_to_import_is_the_same_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    config = ModelConfig.from_env(bedrock_env(ANTHROPIC_BEDROCK_BASE_URL="http://127.0.0.1:9"))
    monkeypatch.setitem(sys.modules, "botocore.eventstream", None)  # found, but broken
    with pytest.raises(ProviderError, match=r"pip install 'agentteams\[bedrock\]'$"):
        AnthropicClient(config).complete(request("claude-haiku-4-5"))


# ---------------------------------------------------------------- the mock's AWS event-stream framing


def test_event_stream_frames_decode_with_botocore_and_the_sdk() -> None:
    from anthropic.lib.bedrock._stream_decoder import AWSEventStreamDecoder
    from botocore.eventstream import EventStreamBuffer

    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {"id": "m1", "note": "é ✓"}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"text": "hi"}}),
        ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]
    data = b"".join(encode(name, body) for name, body in events)
    buffer = EventStreamBuffer()
    for i in range(0, len(data), 7):  # frames split across reads, as a socket delivers them
        buffer.add_data(data[i : i + 7])
    frames = list(buffer)
    assert [f.headers[":message-type"] for f in frames] == ["event", "event", "exception"]
    assert frames[2].headers[":exception-type"] == "serviceUnavailableException"
    decoded = list(AWSEventStreamDecoder().iter_bytes(iter([data[:50], data[50:]])))
    assert [e.event for e in decoded] == ["message_start", "content_block_delta", "error"]
    assert decoded[0].json() == events[0][1] and decoded[1].json() == events[1][1]
    assert decoded[2].json()["error"] == {"type": "serviceUnavailableException", "message": "Overloaded"}


# ---------------------------------------------------------------- the SDK's clients against the scripted server


@pytest.fixture
def server() -> Iterator[MockServer]:
    answers = [{"content": [{"type": "text", "text": ANSWER}]}] * 8
    with MockServer({"routes": [{"name": "main", "turns": answers}]}) as started:
        yield started


def request(model: str) -> ModelRequest:
    return ModelRequest(model=model, system="sys", messages=[{"role": "user", "content": "hi"}], tools=[],
                        max_tokens=64)  # fmt: skip


def ask(env: dict[str, str], model: str) -> str:
    client = AnthropicClient(ModelConfig.from_env(env))
    try:
        return str(client.complete(request(model)).content[0]["text"])
    finally:
        client.close()


@pytest.mark.parametrize(
    ("credentials", "auth"),
    [({"AWS_SESSION_TOKEN": TOKEN}, "sigv4"), ({"AWS_BEARER_TOKEN_BEDROCK": BEARER}, "bearer"),
     ({"CLAUDE_CODE_SKIP_BEDROCK_AUTH": "1"}, "none")],
)  # fmt: skip
def test_bedrock_through_the_sdk_streams_from_the_invoke_route(
    server: MockServer, credentials: dict[str, str], auth: str
) -> None:
    env = {**bedrock_env(AWS_REGION="eu-west-3", ANTHROPIC_BEDROCK_BASE_URL=server.base_url), **credentials}
    if "AWS_BEARER_TOKEN_BEDROCK" in credentials:  # the SDK takes a Bedrock API key or AWS keys, not both
        env = {k: v for k, v in env.items() if not k.startswith("AWS_") or k in credentials or k == "AWS_REGION"}
    assert ask(env, "claude-haiku-4-5-20251001") == ANSWER
    [record] = server.requests
    model = "eu.anthropic.claude-haiku-4-5-20251001-v1:0"  # the profile of eu-west-3's geography
    assert record["path"] == f"/model/{model}/invoke-with-response-stream"
    assert record["cloud"]["model"] == model and record["cloud"]["auth"] == auth
    if auth == "sigv4":  # signed for this region and service (SigV4 ran, offline)
        assert (record["cloud"]["region"], record["cloud"]["service"]) == ("eu-west-3", "bedrock")
    assert SECRET not in str(record) and TOKEN not in str(record) and BEARER not in str(record)


def test_vertex_through_the_sdk_streams_from_the_raw_predict_route(server: MockServer) -> None:
    env = vertex_env(CLOUD_ML_REGION="europe-west1", VERTEX_REGION_CLAUDE_HAIKU_4_5="us-east5",
                     ANTHROPIC_VERTEX_BASE_URL=f"{server.base_url}/v1")  # fmt: skip
    assert ask(env, "claude-sonnet-4-5-20250929") == ANSWER
    assert ask(env, "claude-haiku-4-5-20251001") == ANSWER
    first, second = server.requests
    assert first["path"] == ("/v1/projects/proj-7/locations/europe-west1/publishers/anthropic/models/"
                             "claude-sonnet-4-5@20250929:streamRawPredict")  # fmt: skip
    assert (second["cloud"]["region"], second["cloud"]["model"]) == ("us-east5", "claude-haiku-4-5@20251001")
    assert first["cloud"]["project"] == "proj-7" and first["cloud"]["auth"] == "none"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("env", "label", "check"),
    [(bedrock_env(ANTHROPIC_BEDROCK_BASE_URL="http://127.0.0.1:{port}"), "Amazon Bedrock", "AWS_REGION"),
     (vertex_env(ANTHROPIC_VERTEX_BASE_URL="http://127.0.0.1:{port}/v1"), "Google Vertex AI", "CLOUD_ML_REGION")],
)  # fmt: skip
def test_an_unreachable_provider_is_named_not_the_anthropic_api(env: dict[str, str], label: str, check: str) -> None:
    port = closed_port()
    env = {k: v.format(port=port) for k, v in env.items()} | {"CLAUDE_CODE_MAX_RETRIES": "0"}
    with pytest.raises(ModelAPIError) as caught:
        ask(env, "claude-sonnet-4-6")
    message = str(caught.value)
    assert f"cannot reach {label} at http://127.0.0.1:{port}" in message and check in message
    assert "api.anthropic.com" not in message and "ANTHROPIC_BASE_URL" not in message


def test_a_refusal_names_the_provider_and_its_credentials() -> None:
    error = {"status": 403, "type": "permission_error", "message": "no access to this model"}
    refusing = MockServer({"routes": [{"name": "main", "turns": [{"error": error}]}]})
    with refusing, pytest.raises(ModelAPIError) as caught:
        ask(bedrock_env(ANTHROPIC_BEDROCK_BASE_URL=refusing.start().base_url), "claude-sonnet-4-6")
    assert str(caught.value).startswith("Amazon Bedrock error 403 permission_error: no access to this model")
    assert "AWS_ACCESS_KEY_ID" in str(caught.value) and "ANTHROPIC_API_KEY" not in str(caught.value)


def test_no_aws_credentials_is_one_line_of_ours() -> None:
    env = {"CLAUDE_CODE_USE_BEDROCK": "1", "ANTHROPIC_BEDROCK_BASE_URL": "http://127.0.0.1:9"}
    with pytest.raises(ProviderAuthError) as caught:
        ask(env, "claude-sonnet-4-6")
    message = str(caught.value)
    assert message.startswith("Amazon Bedrock: no usable credentials (") and "AWS_PROFILE" in message
    assert "\n" not in message


def test_the_mock_refuses_what_the_providers_refuse(server: MockServer) -> None:
    import httpx2

    body = {"anthropic_version": "2026-10-21", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    bedrock = f"{server.base_url}/model/us.anthropic.claude-sonnet-4-6/invoke"
    model = "publishers/anthropic/models/claude-sonnet-4-6"
    vertex = f"{server.base_url}/v1/projects/p/locations/global/{model}:rawPredict"
    assert httpx2.post(bedrock, json={**body, "model": "x"}).json()["error"]["message"] == (
        "extraneous key [model] is not permitted")  # fmt: skip
    assert httpx2.post(vertex, json={**body, "anthropic_version": None}).status_code == 400
    answer = httpx2.post(bedrock, json=body).json()  # not streamed: the message as JSON, with the path's model id
    assert (answer["model"], answer["content"][0]["text"]) == ("us.anthropic.claude-sonnet-4-6", ANSWER)
    assert [r["status"] for r in server.requests] == [400, 400, 200]


def test_status_and_doctor_describe_the_provider_in_one_line() -> None:
    assert describe({}) == "Anthropic API"
    assert describe(bedrock_env(AWS_REGION="eu-west-3")) == "Amazon Bedrock (eu-west-3)"
    assert describe(vertex_env()) == "Google Vertex AI (us-east5, project proj-7)"
    assert describe(bedrock_env(AWS_REGION="x")).startswith("AWS_REGION 'x' is not an AWS region")
    assert SECRET not in describe(bedrock_env())


def test_a_transient_exception_in_a_bedrock_stream_is_retried() -> None:
    overloaded = {"status": 529, "type": "overloaded_error", "message": "Overloaded", "in_stream": True}
    turns = [{"error": overloaded}, {"content": [{"type": "text", "text": ANSWER}]}]
    waits: list[float] = []
    with MockServer({"routes": [{"name": "main", "turns": turns}]}) as flaky:
        config = ModelConfig.from_env(bedrock_env(ANTHROPIC_BEDROCK_BASE_URL=flaky.base_url))
        client = AnthropicClient(config, sleep=waits.append)
        assert client.complete(request("claude-sonnet-4-6")).content[0]["text"] == ANSWER
        client.close()
        assert [r["status"] for r in flaky.requests] == [200, 200]  # the first one's stream ended in an exception
    assert len(waits) == 1  # one backoff: the exception frame (serviceUnavailableException) counted as transient


def test_no_google_credentials_is_one_line_of_ours(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name, value in (("HOME", tmp_path), ("CLOUDSDK_CONFIG", tmp_path / "gcloud"), ("NO_GCE_CHECK", "True")):
        monkeypatch.setenv(name, str(value))  # no ADC file, and no metadata server asked
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    env = {**vertex_env(ANTHROPIC_VERTEX_BASE_URL="http://127.0.0.1:9/v1"), "CLAUDE_CODE_SKIP_VERTEX_AUTH": "0"}
    with pytest.raises(ProviderAuthError) as caught:
        ask(env, "claude-sonnet-4-6")
    message = str(caught.value)
    assert message.startswith("Google Vertex AI: no usable credentials (") and "gcloud auth" in message
    assert "\n" not in message
