"""The model client through the real anthropic SDK against the project's `MockServer`; aliases, config, pricing."""

from __future__ import annotations

import dataclasses
import itertools
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import pytest

from agentteams.mockapi import MockServer
from agentteams.model import wire_body
from agentteams.model.aliases import UnknownModelError, known_model, resolve_model, wire_model
from agentteams.model.anthropic_client import AnthropicClient, ModelAPIError, build_params, parse_retry_after
from agentteams.model.config import MissingCredentialsError, ModelConfig
from agentteams.model.pricing import Price, UsageLedger, cost_usd, price_for
from agentteams.model.types import ModelRequest, RetryNotice, StreamCallbacks, ToolSpec, Usage
from agentteams.model.urls import BadBaseURLError
from tests.support.fault_ledger import FaultLedger

KEY = "sk-ant-test-SECRET-0123456789abcdef"
MODEL = "claude-haiku-4-5"  # not one the SDK flags as deprecated
DEADLINE = 10.0

# ---------------------------------------------------------------- the project's scripted server


@pytest.fixture
def serve() -> Iterator[Callable[..., MockServer]]:
    """Start a `MockServer` answering every request from one route's turns, in order."""
    servers: list[MockServer] = []

    def start(*turns: Any) -> MockServer:
        servers.append(MockServer({"routes": [{"name": "main", "turns": list(turns)}]}).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def captured_headers(config: ModelConfig) -> dict[str, str]:
    """The raw headers one model call sends (MockServer redacts credentials, so a bare server answers 400 here)."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            seen.append({k.lower(): v for k, v in self.headers.items()})
            body = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": "captured"}})
            self.send_response(400)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        with pytest.raises(ModelAPIError) as info:
            AnthropicClient(ModelConfig(api_key=config.api_key, auth_token=config.auth_token, base_url=url)).complete(
                request()
            )
        assert "captured" in assert_one_line(info.value)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert len(seen) == 1
    return seen[0]


def err(status: int, message: str = "mock", **extra: Any) -> dict[str, Any]:
    return {"error": {"status": status, "message": message, **extra}}


class Recorder:
    def __init__(self) -> None:
        self.delays: list[float] = []
        self.notices: list[RetryNotice] = []
        self.text: list[str] = []

    def callbacks(self) -> StreamCallbacks:
        return StreamCallbacks(on_text=self.text.append, on_retry=self.notices.append)


def make_client(base_url: str, recorder: Recorder, **kw: Any) -> AnthropicClient:
    client = AnthropicClient(ModelConfig(api_key=KEY, base_url=base_url, **kw), ledger=UsageLedger())
    client.sleep = recorder.delays.append
    return client


def request(messages: list[dict[str, Any]] | None = None) -> ModelRequest:
    def schema(field: str) -> dict[str, Any]:
        return {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}

    tools = [ToolSpec("Read", "Read a file", schema("file_path")), ToolSpec("Bash", "Run a command", schema("command"))]
    return ModelRequest(MODEL, "You are a careful agent.", tools, messages or [{"role": "user", "content": "hi"}])


def assert_one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text and "Traceback" not in text and KEY not in text
    return text


# ---------------------------------------------------------------- tests


def test_importing_the_client_does_not_import_the_sdk() -> None:
    code = (
        "import agentteams.model.anthropic_client, agentteams.model.pricing, sys; assert 'anthropic' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)


def test_streamed_text_and_tool_use(serve: Any) -> None:
    call = {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "/tmp/a.txt", "limit": None}}
    blocks = [{"type": "text", "text": "Let me read the file."}, call]
    usage = {"input_tokens": 12, "output_tokens": 30, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 50}
    server = serve({"content": blocks, "usage": usage, "chunk": 6, "delta_delay_ms": 60})
    arrivals: list[tuple[float, str]] = []
    client = make_client(server.base_url, Recorder())
    response = client.complete(request(), StreamCallbacks(on_text=lambda t: arrivals.append((time.monotonic(), t))))
    assert [t for _, t in arrivals] == ["Let me", " read ", "the fi", "le."]
    assert arrivals[-1][0] - arrivals[0][0] >= 0.15  # each delta reached us as the server sent it, not at the end
    assert response.content == blocks
    assert response.stop_reason == "tool_use"
    assert response.model == MODEL
    assert response.request_id and response.request_id.startswith("req_mock_")
    assert response.usage == Usage(12, 30, 100, 50)
    assert client.ledger is not None and client.ledger.account("main").requests == 1
    record = server.requests[0]
    assert record["headers"]["x-api-key"] == "<redacted>" and "authorization" not in record["headers"]
    assert record["headers"]["x-app"] == "agentteams" and record["body"]["stream"] is True


def test_our_body_is_what_the_sdk_s_own_stream_sends_and_tools_are_encoded_once(serve: Any) -> None:
    server = serve({"text": "ours"}, {"text": "the SDK's"})
    req = dataclasses.replace(request(), model="sonnet[1m]", server_tools=[{"type": "web_search_20250305",
                                                                                "name": "web_search"}])  # fmt: skip
    make_client(server.base_url, Recorder()).complete(req)
    params = build_params(req)
    # the SDK as ours is built (the key in x-api-key, our x-app), sending through its own stream helper
    headers: dict[str, Any] = {"x-app": "agentteams", "x-api-key": KEY, "Authorization": anthropic.Omit()}
    sdk = anthropic.Anthropic(api_key=KEY, base_url=server.base_url, timeout=ModelConfig().timeout, max_retries=0,
                              default_headers=headers)  # fmt: skip
    with sdk.messages.stream(**params) as stream:
        stream.get_final_message()
    ours, theirs = server.requests
    assert ours["body"] == theirs["body"] and ours["body"]["stream"] is True
    assert list(ours["body"]) == list(theirs["body"])  # the same order of fields: bytes read in order meet the same
    assert list(ours["headers"].items()) == list(theirs["headers"].items())  # every header, in the same order
    tools = params["tools"]
    first, again = wire_body.body({"tools": tools}), wire_body.body({"tools": [dict(t) for t in tools]})
    assert first == again and json.loads(first)["tools"] == tools
    renamed = [{**tools[0], "description": "Read one file"}, *tools[1:]]
    assert json.loads(wire_body.body({"tools": renamed}))["tools"][0]["description"] == "Read one file"
    marked = [{**tools[0], "cache_control": {"type": "ephemeral"}}, *tools[1:]]
    assert "cache_control" in json.loads(wire_body.body({"tools": marked}))["tools"][0]
    other = [{**tools[0], "input_schema": {**tools[0]["input_schema"], "required": []}}]
    assert json.loads(wire_body.body({"tools": other}))["tools"][0]["input_schema"]["required"] == []


def test_529_twice_then_success_honours_retry_after(serve: Any) -> None:
    server = serve(err(529, "Overloaded", retry_after=0.25), err(529, "Overloaded", retry_after=1), {"text": "done"})
    rec = Recorder()
    response = make_client(server.base_url, rec).complete(request(), rec.callbacks())
    assert response.content == [{"type": "text", "text": "done"}]
    assert [n.attempt for n in rec.notices] == [1, 2]
    assert rec.delays == [0.25, 1.0] == [n.delay for n in rec.notices]
    assert "529" in rec.notices[0].reason and "overloaded_error" in rec.notices[0].reason
    assert len(server.requests) == 3


def test_backoff_without_retry_after_is_exponential_with_jitter(serve: Any) -> None:
    server = serve(err(500, "boom"), err(429, "slow"), err(503, "down"), {"text": "ok"})
    rec = Recorder()
    make_client(server.base_url, rec).complete(request(), rec.callbacks())
    assert len(rec.delays) == 3
    for delay, step in zip(rec.delays, (0.5, 1.0, 2.0), strict=True):
        assert 0.75 * step <= delay <= step


def test_error_event_inside_the_stream_is_retried(serve: Any) -> None:
    server = serve(err(529, "Overloaded", in_stream=True), {"text": "whole"})
    rec = Recorder()
    response = make_client(server.base_url, rec).complete(request(), rec.callbacks())
    assert response.content == [{"type": "text", "text": "whole"}]
    assert len(rec.notices) == 1 and "overloaded_error" in rec.notices[0].reason


def test_a_malformed_stream_is_retried_and_persisting_is_one_line_naming_the_api(
    serve: Any, ledger: FaultLedger
) -> None:
    """A stream event that is not JSON (a broken proxy): asked again like a dropped connection; it raised a bare
    JSONDecodeError that killed a teammate's thread and printed a traceback headless."""
    server = serve({"malformed": True}, {"text": "whole"})
    rec = Recorder()
    ledger.faults, ledger.writes = 4, 2  # one malformed answer before a whole one; three in a row
    response = make_client(server.base_url, rec).complete(request(), rec.callbacks())
    ledger.lost += response.content != [{"type": "text", "text": "whole"}]
    assert response.content == [{"type": "text", "text": "whole"}]
    assert len(rec.notices) == 1 and "malformed" in rec.notices[0].reason
    broken = serve(*[{"malformed": True}] * 3)
    with pytest.raises(ModelAPIError) as info:
        make_client(broken.base_url, rec, max_retries=2).complete(request(), rec.callbacks())
    text = assert_one_line(info.value)
    assert "malformed answers" in text and broken.base_url.rstrip("/") in text and "3 attempts" in text


def test_an_answer_trickled_past_the_timeout_is_cut_off_though_each_read_comes_in_time(
    serve: Any, ledger: FaultLedger
) -> None:
    """A server sending a byte now and then never trips a read timeout: the request as a whole has a deadline."""
    server = serve({"text": "t" * 16, "chunk": 1, "delta_delay_ms": 200})  # ~3 s for the whole answer
    rec = Recorder()
    started = time.monotonic()
    ledger.faults = 1
    with pytest.raises(ModelAPIError) as info:
        make_client(server.base_url, rec, timeout=1.0, max_retries=0).complete(request(), rec.callbacks())
    ledger.hangs += time.monotonic() - started >= 2.8
    assert time.monotonic() - started < 2.8, "the answer was read to its end"
    assert "did not end within the request's timeout" in assert_one_line(info.value)


def test_retries_give_up_with_one_line(serve: Any) -> None:
    server = serve(*[err(529, "Overloaded")] * 3)
    rec = Recorder()
    with pytest.raises(ModelAPIError) as info:
        make_client(server.base_url, rec, max_retries=2).complete(request(), rec.callbacks())
    text = assert_one_line(info.value)
    assert "529" in text and "Overloaded" in text and "3 attempts" in text
    assert len(server.requests) == 3 and len(rec.notices) == 2


def test_400_is_one_clear_line_and_not_retried(serve: Any) -> None:
    server = serve(err(400, "messages.0.content: Field required"))
    rec = Recorder()
    with pytest.raises(ModelAPIError) as info:
        make_client(server.base_url, rec).complete(request(), rec.callbacks())
    text = assert_one_line(info.value)
    assert "400" in text and "messages.0.content: Field required" in text
    assert info.value.status == 400 and info.value.error_type == "invalid_request_error"
    assert len(server.requests) == 1 and not rec.notices


def test_401_names_the_variable_and_hides_an_echoed_key(serve: Any) -> None:
    server = serve(err(401, f"invalid x-api-key {KEY}"))
    with pytest.raises(ModelAPIError) as info:
        make_client(server.base_url, Recorder()).complete(request())
    text = assert_one_line(info.value)
    assert "401" in text and "ANTHROPIC_API_KEY" in text and "***" in text


def test_no_key_is_one_line_with_the_way_out() -> None:
    with pytest.raises(MissingCredentialsError) as info:
        ModelConfig.from_env({"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"})
    text = assert_one_line(info.value)
    assert "ANTHROPIC_API_KEY" in text and "agentteams demo" in text
    with pytest.raises(MissingCredentialsError):
        AnthropicClient(ModelConfig(api_key="", auth_token=None))


def test_config_from_env() -> None:
    cfg = ModelConfig.from_env(
        {"ANTHROPIC_AUTH_TOKEN": KEY, "ANTHROPIC_BASE_URL": "http://localhost:8080/", "API_TIMEOUT_MS": "5000"}
    )
    assert (cfg.api_key, cfg.auth_token, cfg.base_url, cfg.timeout) == (None, KEY, "http://localhost:8080", 5.0)
    with pytest.raises(BadBaseURLError) as info:
        ModelConfig.from_env({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "localhost:8080"})
    assert "ANTHROPIC_BASE_URL" in assert_one_line(info.value)


def test_bad_base_url_is_one_line_naming_the_url() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    rec = Recorder()
    client = make_client(f"http://127.0.0.1:{port}", rec, max_retries=2)
    with pytest.raises(ModelAPIError) as info:
        client.complete(request(), rec.callbacks())
    text = assert_one_line(info.value)
    assert f"http://127.0.0.1:{port}" in text and "cannot reach" in text
    assert len(rec.notices) == 2 and all("connection" in n.reason for n in rec.notices)


def test_model_aliases(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL"):
        monkeypatch.delenv(name, raising=False)
    assert resolve_model("sonnet") == "claude-sonnet-5-5"  # Claude Code 2.1.330's (interop/test_interop_models.py)
    assert resolve_model("Opus") == resolve_model("default") == "claude-opus-5-5"
    assert resolve_model("haiku") == "claude-haiku-5-5"
    # 2.1.332 names a model whose window is 1M already without `[1m]` (its set_model reply)
    assert resolve_model("sonnet[1m]") == "claude-sonnet-5-5" and resolve_model("Default[1M]") == "claude-opus-5-5"
    assert resolve_model("sonnet[1m]", {"ANTHROPIC_DEFAULT_SONNET_MODEL": "claude-sonnet-4-5"}) == (
        "claude-sonnet-4-5[1m]"
    )
    assert wire_model("claude-sonnet-4-6[1m]") == ("claude-sonnet-4-6", ["context-1m-2025-08-07"])
    assert wire_model("claude-sonnet-5-5[1m]") == ("claude-sonnet-5-5", [])  # a 1M window of its own
    assert wire_model("claude-haiku-4-5") == ("claude-haiku-4-5", [])
    monkeypatch.setenv("ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-4-5-20251101")
    assert resolve_model("opus") == "claude-opus-4-5-20251101"
    for full in ("claude-3-5-haiku-20241022", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                 "arn:aws:bedrock:us-east-1:123:inference-profile/x"):  # fmt: skip
        assert resolve_model(full) == full
    assert resolve_model(" gpt-4 ") == "gpt-4" and resolve_model("sonet") == "sonet"  # 2.1.332 takes any name
    for bad, check in (("", resolve_model), ("gpt-4", known_model), ("sonet", known_model)):
        with pytest.raises(UnknownModelError) as info:
            check(bad)
        text = assert_one_line(info.value)
        assert "sonnet, opus, haiku, fable, best, opusplan, default" in text
    assert known_model("claude-x") == "claude-x" and known_model("haiku") == "claude-haiku-5-5"
    assert resolve_model("fable", {}) == "claude-fable-5-2" and resolve_model("best", {}) == "claude-opus-5-5"


def test_the_default_model_of_2_1_330_is_accepted_everywhere(serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    new = "claude-opus-5-5"  # what Claude Code 2.1.330 passes its teammates as --model
    assert resolve_model(new) == new
    monkeypatch.setenv("ANTHROPIC_DEFAULT_OPUS_MODEL", new)
    assert resolve_model("opus") == new
    assert price_for(new) == Price(4.0, 20.0, read=0.2)  # as Claude Code 2.1.330 prices it
    usage = {"input_tokens": 1_000_000, "output_tokens": 1_000_000, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}  # fmt: skip
    server = serve({"text": "hi", "usage": usage})
    client = make_client(server.base_url, Recorder())
    response = client.complete(dataclasses.replace(request(), model=new), StreamCallbacks())
    assert response.model == new and server.requests[0]["body"]["model"] == new
    assert client.ledger is not None
    assert client.ledger.account("main").cost_usd == pytest.approx(4 + 20)
    assert client.ledger.record("main", "claude-unknown-9", Usage(10, 10)) == 0.0  # an unknown model costs 0


def _count_breakpoints(value: Any) -> int:
    if isinstance(value, dict):
        return int("cache_control" in value) + sum(_count_breakpoints(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_breakpoints(v) for v in value)
    return 0


def _strip_cache(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache(v) for v in value]
    return value


def _tool_turn(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    call = {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": f"echo {n}"}}
    assistant = {"role": "assistant", "content": [{"type": "text", "text": f"step {n}"}, call]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": str(n)}]}
    return assistant, result


def test_build_params_places_cache_breakpoints() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "first"}, *_tool_turn(1)]
    before = json.dumps(messages)
    params = build_params(request(messages))
    assert json.dumps(messages) == before  # the caller's conversation is not touched
    assert list(params) == ["model", "max_tokens", "tools", "system", "messages"]
    assert "cache_control" in params["tools"][-1] and "cache_control" not in params["tools"][0]
    assert params["system"] == [
        {"type": "text", "text": "You are a careful agent.", "cache_control": {"type": "ephemeral"}}
    ]
    assert params["messages"][0]["content"] == [
        {"type": "text", "text": "first", "cache_control": {"type": "ephemeral"}}
    ]
    assert params["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert _count_breakpoints(params) == 4
    marked = [
        dict(m, content=[dict(b, cache_control={"type": "ephemeral"}) for b in m["content"]])
        for m in params["messages"]
    ]
    assert _count_breakpoints(build_params(request(marked))) == 4  # stale markers never add up


def test_request_prefix_is_byte_stable_over_five_turns(serve: Any) -> None:
    server = serve(*[{"text": f"step {n}"} for n in range(5)])
    client = make_client(server.base_url, Recorder())
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    built: list[str] = []
    for n in range(5):
        params = build_params(request(messages))
        assert _count_breakpoints(params) <= 4 and "cache_control" in json.dumps(params["messages"][-1])
        built.append(json.dumps(_strip_cache(params)))
        usage = client.complete(request(messages)).usage
        assert (usage.cache_read_input_tokens > 0) == (n > 0)  # the server's simulated cache hits from turn 2 on
        assistant, result = _tool_turn(n)
        messages += [assistant, result]
    for prev, nxt in itertools.pairwise(built):
        assert prev.endswith("]}") and nxt.startswith(prev[:-2] + ", ")
    sent = [_strip_cache(r["body"]) for r in server.requests]  # what went over the wire, through the SDK
    for prev, nxt in itertools.pairwise(sent):
        assert json.dumps(prev["tools"]) == json.dumps(nxt["tools"]) and prev["system"] == nxt["system"]
        assert json.dumps(nxt["messages"]).startswith(json.dumps(prev["messages"])[:-1])
    assert all(_count_breakpoints(r["body"]) <= 4 for r in server.requests)


def test_pricing_and_ledger() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_creation_input_tokens=1_000_000,
                  cache_read_input_tokens=1_000_000)  # fmt: skip
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx(3 + 15 + 3.75 + 0.3)
    assert cost_usd("claude-opus-4-1", usage) == pytest.approx(15 + 75 + 18.75 + 1.5)
    assert cost_usd("claude-haiku-4-5", usage) == pytest.approx(1 + 5 + 1.25 + 0.1)
    assert cost_usd("mystery-model", usage) == 0.0
    ledger = UsageLedger()
    small = Usage(input_tokens=100, output_tokens=10)

    def work(agent: str) -> None:
        for _ in range(200):
            ledger.record(agent, MODEL, small)

    threads = [threading.Thread(target=work, args=(name,)) for name in ("lead", "alice", "bob", "alice")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    report = ledger.to_json()
    assert report["agents"]["alice"]["requests"] == 400 and report["agents"]["lead"]["input_tokens"] == 20_000
    assert report["total"]["requests"] == 800 and report["total"]["output_tokens"] == 8_000
    assert report["total"]["cost_usd"] == pytest.approx(800 * cost_usd(MODEL, small))
    json.dumps(report)


def test_retry_after_parsing() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "9999"}) == 60.0
    assert parse_retry_after({"retry-after": "soon"}) is None and parse_retry_after({}) is None
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    delay = parse_retry_after({"retry-after": future})
    assert delay is not None and 25 <= delay <= 31


def test_the_key_never_leaks(serve: Any) -> None:
    cfg = ModelConfig(api_key=KEY, auth_token=KEY + "-token")
    for shown in (repr(cfg), str(cfg), repr(AnthropicClient(cfg))):
        assert KEY not in shown and "***" in shown
    server = serve({"text": "hi"}, err(404, "model: x"))
    client = make_client(server.base_url, Recorder())
    client.complete(request())
    with pytest.raises(ModelAPIError) as info:
        client.complete(request())
    assert_one_line(info.value)
    for record in server.requests:
        assert KEY not in json.dumps(record["body"]) and KEY not in json.dumps(record["headers"])
        assert record["headers"]["x-api-key"] == "<redacted>" and "authorization" not in record["headers"]
    headers = captured_headers(ModelConfig(api_key=KEY))
    assert [name for name, value in headers.items() if KEY in value] == ["x-api-key"] and headers["x-api-key"] == KEY
    headers = captured_headers(ModelConfig(auth_token=KEY))
    assert [name for name, value in headers.items() if KEY in value] == ["authorization"]
    assert headers["authorization"] == f"Bearer {KEY}"
