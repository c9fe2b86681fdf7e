"""Our reader of a streamed answer (model/answer.py, through model/first_party.py) against the SDK's own stream as the
oracle: the same events, sent over the same in-memory HTTP transport, give the same `ModelResponse`, the same text
callbacks, and the same error for an `error` event."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from agentteams.model.answer import Answer, BadToolInput
from agentteams.model.anthropic_client import _to_response, build_params
from agentteams.model.config import ModelConfig
from agentteams.model.first_party import FirstParty, StatusError, http_module
from agentteams.model.types import ModelRequest, ModelResponse, ToolSpec

Event = dict[str, Any]
USAGE = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 3, "cache_read_input_tokens": 4}


def start(**usage: Any) -> Event:
    message: Event = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {**USAGE, **usage}}  # fmt: skip
    return {"type": "message_start", "message": message}


def block(index: int, content: Event) -> Event:
    return {"type": "content_block_start", "index": index, "content_block": content}


def delta(index: int, **d: Any) -> Event:
    return {"type": "content_block_delta", "index": index, "delta": d}


def stop(index: int) -> Event:
    return {"type": "content_block_stop", "index": index}


def end(reason: str = "end_turn", **usage: Any) -> list[Event]:
    return [{"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
             "usage": {"output_tokens": 42, **usage}}, {"type": "message_stop"}]  # fmt: skip


def text(index: int, *parts: str) -> list[Event]:
    return [block(index, {"type": "text", "text": ""}), *(delta(index, type="text_delta", text=p) for p in parts),
            stop(index)]  # fmt: skip


def tool(index: int, kind: str, *parts: str, name: str = "Write") -> list[Event]:
    head = block(index, {"type": kind, "id": f"toolu_{index}", "name": name, "input": {}})
    return [head, *(delta(index, type="input_json_delta", partial_json=p) for p in parts), stop(index)]


BIG = json.dumps({"file_path": "/tmp/ü.txt", "content": "line\n" * 400, "nested": {"a": [1, 2.5, None, True]}})
CITATION = {"type": "web_search_result_location", "url": "https://example.com/", "title": "Example",
            "encrypted_index": "abc", "cited_text": "an example"}  # fmt: skip
SEARCH_RESULT = {"type": "web_search_tool_result", "tool_use_id": "toolu_0",
                 "content": [{"type": "web_search_result", "url": "https://example.com/", "title": "Example",
                              "encrypted_content": "xyz", "page_age": None}]}  # fmt: skip

CASES: dict[str, list[Event]] = {
    "text": [start(), *text(0, "Hel", "lo, ", "world"), *end()],
    "text and a tool call in many pieces": [
        start(), *text(0, "Writing."), *tool(1, "tool_use", *(BIG[i : i + 37] for i in range(0, len(BIG), 37))),
        *end("tool_use"),
    ],
    "a tool call with no input deltas": [start(), *tool(0, "tool_use", name="TaskList"), *end("tool_use")],
    "thinking, signature, text": [
        start(), block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, type="thinking_delta", thinking="Let me "), delta(0, type="thinking_delta", thinking="think."),
        delta(0, type="signature_delta", signature="sig=="), stop(0), *text(1, "Done."), *end(),
    ],
    "web search with citations": [
        start(), *tool(0, "server_tool_use", '{"query": ', '"example"}', name="web_search"), block(1, SEARCH_RESULT),
        stop(1), block(2, {"type": "text", "text": "", "citations": None}),
        delta(2, type="citations_delta", citation=CITATION), delta(2, type="text_delta", text="It is an example."),
        stop(2), *end(server_tool_use={"web_search_requests": 1}),
    ],
    "usage totals in message_delta replace message_start's": [
        start(input_tokens=0), *text(0, "ok"), *end(input_tokens=77, cache_read_input_tokens=9),
    ],
    "pings and an unknown event are skipped": [
        start(), {"type": "ping"}, *text(0, "a"), {"type": "something_new", "x": 1}, {"type": "ping"}, *end(),
    ],
    "an unknown event before message_start is skipped": [{"type": "something_new"}, start(), *text(0, "a"), *end()],
    "nulls inside a server tool's input are kept": [
        start(), *tool(0, "server_tool_use", '{"q": null, "b": [null], "c": {"d": null}}', name="web_search"), *end(),
    ],
    "a tool input cut short by max_tokens": [
        start(), block(0, {"type": "tool_use", "id": "toolu_0", "name": "Write", "input": {}}),
        delta(0, type="input_json_delta", partial_json='{"file_path": "/tmp/a", "content": "abc'), stop(0),
        *end("max_tokens"),
    ],
}  # fmt: skip


def sse(events: list[Event]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def answering(body: bytes, status: int = 200) -> Any:
    """An in-memory transport answering every request with `body`, in 7-byte pieces (frames split anywhere)."""
    http = http_module()

    def respond(request: Any) -> Any:
        pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
        headers = {"content-type": "text/event-stream", "request-id": "req_42"}
        return http.Response(status, headers=headers, stream=http.ByteStream(b"".join(pieces)))

    return http.MockTransport(respond)


def sdk_over(body: bytes, status: int = 200) -> Any:
    """An SDK client whose every request is answered with `body`."""
    client = anthropic.DefaultHttpxClient(transport=answering(body, status))
    return anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9", max_retries=0, http_client=client)


PARAMS = build_params(ModelRequest(model="claude-x", system="s", tools=[ToolSpec("Write", "w", {"type": "object"})],
                                   messages=[{"role": "user", "content": "hi"}]))  # fmt: skip


def theirs(events: list[Event]) -> tuple[ModelResponse | None, list[str]]:
    texts: list[str] = []
    with sdk_over(sse(events)).messages.stream(**PARAMS) as stream:
        for event in stream:
            if event.type == "text":
                texts.append(event.text)
        message = stream.get_final_message()
    return (_to_response(message, stream.request_id) if message.stop_reason else None), texts


def ours(events: list[Event]) -> tuple[ModelResponse | None, list[str]]:
    texts: list[str] = []
    wire = FirstParty(ModelConfig(api_key="k", base_url="http://127.0.0.1:9"), transport=answering(sse(events)))
    answer = Answer(texts.append)
    request_id = wire.answer(PARAMS, None, answer)
    return answer.response(request_id), texts


@pytest.mark.parametrize("case", list(CASES))
def test_our_reader_gives_what_the_sdk_s_stream_gives(case: str) -> None:
    mine, expected = ours(CASES[case]), theirs(CASES[case])
    assert mine[0] is not None
    assert mine == expected


def test_the_big_tool_input_arrives_whole() -> None:
    response, _ = ours(CASES["text and a tool call in many pieces"])
    assert response is not None and response.content[1]["input"] == json.loads(BIG)
    assert response.usage.output_tokens == 42 and response.request_id == "req_42"


def test_a_stream_without_its_stop_reason_is_no_response() -> None:
    cut = [start(), *text(0, "half")]
    assert ours(cut)[0] is None
    assert theirs(cut)[0] is None


def test_an_error_event_is_the_sdk_s_error_in_all_we_read_of_it() -> None:
    events = [start(), *text(0, "par"),
              {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]  # fmt: skip
    with pytest.raises(StatusError) as ours_raised:
        ours(events)
    with pytest.raises(anthropic.APIStatusError) as theirs_raised:
        theirs(events)
    mine, expected = ours_raised.value, theirs_raised.value
    fields = ("body", "status_code", "type", "api_message", "request_id")
    assert (str(mine), *(getattr(mine, f) for f in fields)) == (str(expected), *(getattr(expected, f) for f in fields))


def test_unparseable_tool_input_is_one_clear_error() -> None:
    answer = Answer()
    for event in [start(), *tool(0, "tool_use", '{"a": ]'), *end("tool_use")]:
        if event["type"] == "content_block_stop":
            with pytest.raises(BadToolInput, match="Unable to parse tool parameter JSON"):
                answer.feed(event)
        else:
            answer.feed(event)
