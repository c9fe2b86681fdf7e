"""The scripted Messages API server, driven through the real anthropic SDK, urllib and the CLI."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import anthropic
import pytest
from anthropic.types import MessageParam, TextBlock, ToolUseBlock

from agentteams.mockapi import MockServer, ScriptError, load_script
from tests.support.cli import Cli
from tests.support.repo import ROOT

MODEL = "claude-test-model"
HI: list[MessageParam] = [{"role": "user", "content": "hi"}]
Serve = Callable[..., MockServer]  # the `serve` fixture: start a server on a script, stopped after the test


# one client a server, as a program keeps one: each new one built its HTTP client anew (~0.1 s of CPU each)
_CLIENTS: weakref.WeakKeyDictionary[MockServer, anthropic.Anthropic] = weakref.WeakKeyDictionary()


def client(server: MockServer, **kw: Any) -> anthropic.Anthropic:
    if kw:
        return anthropic.Anthropic(api_key="test-key", base_url=server.base_url, max_retries=0, **kw)
    if server not in _CLIENTS:
        _CLIENTS[server] = anthropic.Anthropic(api_key="test-key", base_url=server.base_url, max_retries=0)
    return _CLIENTS[server]


def texts(message: anthropic.types.Message) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def ask(server: MockServer, messages: list[MessageParam] = HI, **kw: Any) -> anthropic.types.Message:
    reply: anthropic.types.Message = client(server).messages.create(
        model=MODEL, max_tokens=100, messages=messages, **kw
    )
    return reply


def raw_request(server: MockServer, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(server.base_url + path, data=body, method=method)
    req.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.fixture
def serve() -> Iterator[Serve]:
    started: list[MockServer] = []

    def start(script: dict[str, Any], **kw: Any) -> MockServer:
        started.append(MockServer(script, **kw).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()


def test_streaming_text_deltas_in_order_and_tool_use_input(serve: Serve) -> None:
    text = "Let me look at the repository layout before changing anything."
    tool = {"type": "tool_use", "name": "Bash", "input": {"command": "ls -la", "description": "List files"}}
    server = serve(
        {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": text}, tool], "chunk": 5}]}]}
    )
    with client(server).messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream:
        deltas = list(stream.text_stream)
        final = stream.get_final_message()
    assert len(deltas) == (len(text) + 4) // 5
    assert "".join(deltas) == text
    assert final.stop_reason == "tool_use" and final.model == MODEL
    use = final.content[1]
    assert isinstance(use, ToolUseBlock)
    assert use.name == "Bash" and use.input == tool["input"] and use.id.startswith("toolu_mock_")
    assert final.usage.output_tokens >= 1 and final.usage.input_tokens >= 1
    record = server.requests[0]
    assert (record["route"], record["turn"], record["status"]) == ("main", 0, 200)
    assert record["response"]["content"][1]["id"] == use.id


def test_non_streaming_then_idle_when_turns_run_out(serve: Serve) -> None:
    turn = {"text": "First answer.", "usage": {"output_tokens": 77}, "delay_ms": 50}
    server = serve({"routes": [{"name": "main", "turns": [turn]}]})
    started = time.monotonic()
    first = ask(server)
    assert time.monotonic() - started >= 0.05
    assert texts(first) == "First answer." and first.stop_reason == "end_turn" and first.id.startswith("msg_mock_")
    assert first.usage.output_tokens == 77 and first.model == MODEL
    assert texts(ask(server)) == "Done."
    assert [r["turn"] for r in server.requests] == [0, None]


def test_count_tokens_head_get_and_unknown_paths(serve: Serve) -> None:
    server = serve({})
    counted = client(server).messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "x" * 400}])
    assert 100 <= counted.input_tokens <= 140
    assert raw_request(server, "HEAD", "/")[0] == 200
    assert raw_request(server, "GET", "/")[0] == 200
    for method, path in [("POST", "/v1/complete"), ("GET", "/v1/models"), ("DELETE", "/v1/messages")]:
        status, data = raw_request(server, method, path, b"{}" if method == "POST" else None)
        assert status == 404
        assert json.loads(data)["error"]["type"] == "not_found_error"
    body = json.dumps({"model": MODEL, "max_tokens": 5, "messages": HI}).encode()
    status, data = raw_request(server, "POST", "/v1/messages?beta=true", body)
    assert status == 200 and json.loads(data)["content"] == [{"type": "text", "text": "OK."}]
    status, data = raw_request(server, "POST", "/v1/messages", b"not json")
    assert status == 400 and json.loads(data)["error"]["type"] == "invalid_request_error"


def test_routing_by_system_first_user_and_tools(serve: Serve) -> None:
    tools: list[anthropic.types.ToolParam] = [{"name": "Read", "description": "d", "input_schema": {"type": "object"}}]
    server = serve(
        {
            "routes": [
                {"name": "alice", "match": {"system": "You are alice", "tools": True}, "turns": ["alice here"]},
                {"name": "bob", "match": {"first_user": "BOBMARK"}, "turns": ["bob here"], "idle": "bob idle"},
            ],
            "fallback": {"text": "side request"},
        }
    )
    assert texts(ask(server, system="You are alice.")) == "side request"  # no tools: not alice's
    assert texts(ask(server, system="You are alice.", tools=tools)) == "alice here"
    later: list[MessageParam] = [
        {"role": "user", "content": "BOBMARK go"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "more"},
    ]
    assert texts(ask(server, messages=later)) == "bob here"
    assert texts(ask(server, messages=later)) == "bob idle"
    assert [r["route"] for r in server.requests] == [None, "alice", "bob", "bob"]


def convo(*texts: str) -> list[MessageParam]:
    """Alternating user / assistant messages with these texts, starting with the user."""
    return cast(list[MessageParam], [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(texts)])


def test_wait_for_and_wait_for_last_hold_a_turn(serve: Serve) -> None:
    turns = [
        {"wait_for": "idle_notification", "text": "saw idle"},
        {"wait_for_last": "shutdown_request", "text": "shutting down"},
    ]
    server = serve({"routes": [{"name": "a", "idle": "waiting", "turns": turns}]})
    assert texts(ask(server)) == "waiting"
    assert texts(ask(server, messages=convo('{"type":"idle_notification"}', "noted", "hello"))) == "saw idle"
    earlier = convo("idle_notification", "ok", "shutdown_request earlier", "hm", "latest")
    assert texts(ask(server, messages=earlier)) == "waiting"  # only the last user message counts
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a shutdown_request"}]}
    tool_turn: list[Any] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [result]},
    ]
    assert texts(ask(server, messages=tool_turn)) == "shutting down"
    assert [r["turn"] for r in server.requests] == [None, 0, None, 1]


def test_a_passable_remark_is_skipped_when_what_the_next_turn_waits_for_is_here(serve: Serve) -> None:
    turns = [
        {"text": "Waiting.", "passable": True},
        {"wait_for": "SHUT-DOWN", "text": "deleting"},
        "done",
    ]
    script = {"routes": [{"name": "a", "idle": "noted", "turns": turns}]}
    early = serve(script)
    assert texts(ask(early)) == "Waiting."  # the news not here yet: the remark, then the wait
    assert texts(ask(early)) == "noted"
    assert texts(ask(early, messages=convo("SHUT-DOWN"))) == "deleting"
    late = serve(script)
    assert texts(ask(late, messages=convo("SHUT-DOWN"))) == "deleting"  # already here: straight on
    assert texts(ask(late)) == "done"
    assert [r["turn"] for r in late.requests] == [1, 2]
    with pytest.raises(ScriptError, match="'passable' must be true or false"):
        load_script({"routes": [{"name": "a", "turns": [{"text": "x", "passable": "yes"}]}]})


def test_error_turns_twice_then_success(serve: Serve) -> None:
    server = serve(
        {
            "routes": [
                {
                    "name": "a",
                    "turns": [
                        {"error": {"status": 529, "message": "Overloaded", "retry_after": 1}, "repeat": 2},
                        {"text": "made it"},
                    ],
                }
            ]
        }
    )
    for _ in range(2):
        with pytest.raises(anthropic.APIStatusError) as info:
            ask(server)
        assert info.value.status_code == 529
        assert info.value.response.headers["retry-after"] == "1"
        assert isinstance(info.value.body, dict)
        assert info.value.body["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert texts(ask(server)) == "made it"
    assert [r["status"] for r in server.requests] == [529, 529, 200]


@pytest.mark.parametrize(
    ("error", "exc"),
    [
        ({"status": 400}, anthropic.BadRequestError),
        ({"status": 401}, anthropic.AuthenticationError),
        ({"type": "rate_limit_error"}, anthropic.RateLimitError),
        ({"status": 500}, anthropic.InternalServerError),
    ],
)
def test_error_statuses_map_to_sdk_errors(serve: Serve, error: dict[str, Any], exc: type[Exception]) -> None:
    server = serve({"fallback": {"error": error}})
    with pytest.raises(exc):
        ask(server)


def test_error_inside_a_stream(serve: Serve) -> None:
    server = serve({"fallback": {"error": {"type": "overloaded_error", "in_stream": True}}})
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):  # noqa: SIM117
        with client(server).messages.stream(model=MODEL, max_tokens=10, messages=HI) as stream:
            stream.get_final_message()


def test_regex_echo_from_the_last_user_message(serve: Serve) -> None:
    echo = {
        "type": "tool_use",
        "name": "SendMessage",
        "input": {
            "to": "team-lead",
            "message": {
                "type": "shutdown_response",
                "request_id": '{{re:requestId\\W+([^\\s"\\\\]+)}}',
                "approve": True,
            },
        },
    }
    server = serve({"fallback": {"content": [echo, {"type": "text", "text": "id {{re:nothing-(here)}}"}]}})
    said = '<teammate-message>{"type":"shutdown_request","requestId":"shutdown-1700@alice"}</teammate-message>'
    reply = ask(server, messages=[{"role": "user", "content": said}])
    use = reply.content[0]
    assert isinstance(use, ToolUseBlock) and isinstance(use.input, dict)
    assert json.loads(use.to_json())["input"]["message"]["request_id"] == "shutdown-1700@alice"
    assert texts(reply) == "id UNMATCHED"


def test_usage_reads_the_cache_when_the_prefix_repeats(serve: Serve) -> None:
    server = serve({})
    tools: list[anthropic.types.ToolParam] = [
        {
            "name": "Read",
            "description": "Reads a file. " * 30,
            "input_schema": {"type": "object"},
            "cache_control": {"type": "ephemeral"},
        }
    ]
    system: list[anthropic.types.TextBlockParam] = [
        {"type": "text", "text": "You are a careful coding agent. " * 40, "cache_control": {"type": "ephemeral"}}
    ]
    turn1: list[MessageParam] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Read the README please. " * 10, "cache_control": {"type": "ephemeral"}}
            ],
        }
    ]
    first = ask(server, messages=turn1, system=system, tools=tools).usage
    assert first.cache_read_input_tokens == 0 and (first.cache_creation_input_tokens or 0) > 300
    # turn 2 moves the newest breakpoint forward; the old prefix (without its cache_control) is read
    turn2: list[MessageParam] = [
        {"role": "user", "content": [{"type": "text", "text": "Read the README please. " * 10}]},
        {"role": "assistant", "content": "Here it is."},
        {"role": "user", "content": [{"type": "text", "text": "Thanks!", "cache_control": {"type": "ephemeral"}}]},
    ]
    second = ask(server, messages=turn2, system=system, tools=tools).usage
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert 0 < (second.cache_creation_input_tokens or 0) < 40  # the two new messages' blocks
    raw_len = len(json.dumps(server.requests[1]["body"]))
    total = second.input_tokens + (second.cache_read_input_tokens or 0) + (second.cache_creation_input_tokens or 0)
    assert abs(total - raw_len / 4) < raw_len / 20
    again = ask(server, messages=turn2, system=system, tools=tools).usage
    assert again.cache_creation_input_tokens == 0 and again.cache_read_input_tokens == total - again.input_tokens
    changed = ask(server, messages=turn2, system=[{**system[0], "text": "Other."}], tools=tools).usage
    assert (changed.cache_read_input_tokens or 0) < (second.cache_read_input_tokens or 0)


def test_secrets_are_redacted_in_requests_and_log(serve: Serve, tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    server = serve({}, log_path=log)
    ask(server)  # this SDK sends the api key as "authorization: Bearer ..."
    client(server, default_headers={"X-Api-Key": "secret-token"}).messages.create(
        model=MODEL, max_tokens=5, messages=HI
    )
    headers = [r["headers"] for r in server.wait_for_requests(2)]
    assert headers[0]["authorization"] == "<redacted>" and headers[1]["x-api-key"] == "<redacted>"
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["route"] is None
    assert "test-key" not in log.read_text() and "secret-token" not in log.read_text()
    assert "test-key" not in json.dumps(server.requests)


def test_concurrent_requests_consume_each_turn_once(serve: Serve) -> None:
    server = serve({"routes": [{"name": "a", "turns": [f"turn {i}" for i in range(8)]}]})
    answers: list[str] = []
    threads = [threading.Thread(target=lambda: answers.append(texts(ask(server)))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert sorted(answers) == [f"turn {i}" for i in range(8)]
    with pytest.raises(TimeoutError):
        server.wait_for_requests(9, timeout=0.05)


def test_bad_scripts_are_refused_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    for content, needle in [
        ("{", "not valid JSON"),
        ('{"routes": [{"match_any": "x"}]}', r"unknown keys \['match_any'\]"),
        ('{"fallback": {"content": [{"type": "text", "text": "{{re:(}}"}]}}', "bad pattern"),
        ('{"fallback": {"error": {"status": 200}}}', "HTTP error status"),
    ]:
        bad.write_text(content)
        with pytest.raises(ScriptError, match=needle) as info:
            load_script(bad)
        assert "\n" not in str(info.value)


def test_the_documented_example_script_loads() -> None:
    page = (ROOT / "docs" / "mock-api.md").read_text(encoding="utf-8")
    section = page[page.index("## The script") :]
    example = section[section.index("```json\n") + 8 : section.index("```", section.index("```json\n") + 8)]
    script = load_script(json.loads(example))
    assert [len(r.turns) for r in script.routes] == [3]


def _read_lines(stream: Any, out: queue.Queue[str]) -> None:
    for line in stream:
        out.put(line)


def test_cli_serves_until_sigterm(tmp_path: Path, cli: Cli) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"routes": [{"name": "cli", "turns": ["from the CLI"]}]}))
    log = tmp_path / "log.jsonl"
    args = ("mock-api", "--script", str(script), "--port", "0", "--log", str(log))
    proc = cli.popen(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True).start()
        line = lines.get(timeout=15)
        assert line.startswith("listening on http://127.0.0.1:")
        base_url = line.split()[-1]
        reply = anthropic.Anthropic(api_key="test-key", base_url=base_url, max_retries=0).messages.create(
            model=MODEL, max_tokens=5, messages=HI
        )
        assert texts(reply) == "from the CLI"
        assert json.loads(log.read_text().splitlines()[0])["route"] == "cli"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_bad_script_exits_1(tmp_path: Path, cli: Cli) -> None:
    done = cli("mock-api", "--script", str(tmp_path / "missing.json"), timeout=30)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "missing.json" in done.stderr
