"""The SDK control channel in memory (agentteams/run/sdk/channel.py): the program's requests answered in order with an
interrupt first, our requests matched to their answers by id, an answer that never comes ends in an error (never an
allow), and the end of the program's input releases everyone waiting."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from typing import Any

import pytest

from agentteams.run.sdk.channel import ControlChannel, ControlError


class Pipe:
    """A stdin the test writes lines into, line by line, and closes."""

    def __init__(self) -> None:
        read, write = os.pipe()
        self.reader = io.TextIOWrapper(io.FileIO(read, "r"), encoding="utf-8")
        self.writer = io.TextIOWrapper(io.FileIO(write, "w"), encoding="utf-8", write_through=True)

    def send(self, obj: dict[str, Any]) -> None:
        self.writer.write(json.dumps(obj) + "\n")

    def close(self) -> None:
        self.writer.close()


class Out:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.changed = threading.Condition()

    def emit(self, line: dict[str, Any]) -> None:
        with self.changed:
            self.lines.append(line)
            self.changed.notify_all()

    def wait(self, count: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.lines) >= count, timeout), self.lines
            return list(self.lines)


def control(request_id: str, subtype: str) -> dict[str, Any]:
    return {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype}}


def test_requests_are_answered_in_order_and_an_interrupt_goes_first() -> None:
    stdin, out, release = Pipe(), Out(), threading.Event()

    def answer(obj: dict[str, Any]) -> list[dict[str, Any]]:
        if obj["request"]["subtype"] == "slow":
            release.wait(5)
        return [{"type": "control_response", "response": {"request_id": obj["request_id"], "subtype": "success"}}]

    channel = ControlChannel(stdin.reader, out.emit, answer)
    channel.start()
    for request_id, subtype in (("a", "slow"), ("b", "set_permission_mode"), ("c", "interrupt")):
        stdin.send(control(request_id, subtype))
    assert [line["response"]["request_id"] for line in out.wait(1)] == ["c"]  # behind nothing
    release.set()
    assert [line["response"]["request_id"] for line in out.wait(3)] == ["c", "a", "b"]
    stdin.close()


def test_our_request_gets_its_own_answer_and_messages_keep_their_order() -> None:
    stdin, out = Pipe(), Out()
    channel = ControlChannel(stdin.reader, out.emit, lambda obj: [])
    channel.start()
    got: list[dict[str, Any]] = []
    asking = threading.Thread(target=lambda: got.append(channel.request("can_use_tool", {"tool_name": "Bash"})))
    asking.start()
    sent = out.wait(1)[0]
    assert sent["type"] == "control_request" and sent["request"] == {"subtype": "can_use_tool", "tool_name": "Bash"}
    stdin.send({"type": "control_response", "response": {"request_id": "someone-else", "subtype": "success",
                                                         "response": {"behavior": "allow"}}})  # fmt: skip
    stdin.send({"type": "user", "message": {"role": "user", "content": "one"}})
    denied = {"request_id": sent["request_id"], "subtype": "success", "response": {"behavior": "deny", "message": "no"}}
    stdin.send({"type": "control_response", "response": denied})
    asking.join(5)
    assert got == [{"behavior": "deny", "message": "no"}]
    stdin.send({"type": "user", "message": {"role": "user", "content": "two"}})
    stdin.close()
    assert [m["message"]["content"] for m in channel.messages()] == ["one", "two"]


def test_an_error_answer_no_answer_and_the_end_of_input_are_errors() -> None:
    stdin, out = Pipe(), Out()
    channel = ControlChannel(stdin.reader, out.emit, lambda obj: [])
    channel.start()
    failures: list[str] = []

    def ask(timeout: float) -> None:
        try:
            channel.request("hook_callback", {}, timeout)
        except ControlError as e:
            failures.append(str(e))

    refused = threading.Thread(target=ask, args=(5.0,))
    refused.start()
    first = out.wait(1)[0]
    stdin.send({"type": "control_response", "response": {"request_id": first["request_id"], "subtype": "error",
                                                         "error": "boom"}})  # fmt: skip
    refused.join(5)
    started = time.monotonic()
    ask(0.2)  # nobody answers: a cancel is sent and the caller hears of it
    assert time.monotonic() - started < 3
    assert out.wait(3)[-1] == {"type": "control_cancel_request", "request_id": out.lines[1]["request_id"]}
    waiting = threading.Thread(target=ask, args=(30.0,))
    waiting.start()
    out.wait(4)
    stdin.close()  # the program went away: whoever waits is told at once
    waiting.join(5)
    assert not waiting.is_alive()
    assert [f.split(": ", 1)[0] for f in failures] == [
        "the program answered hook_callback with an error", "the program did not answer hook_callback within 0.2s",
        "the program's input ended",
    ]  # fmt: skip
    with pytest.raises(ControlError, match="input ended"):
        channel.request("can_use_tool", {})


def test_messages_that_came_before_a_moment_are_taken_together_and_later_ones_wait() -> None:
    stdin, out = Pipe(), Out()
    channel = ControlChannel(stdin.reader, out.emit, lambda obj: [])
    channel.start()
    reading = channel.messages()

    def user(text: str) -> dict[str, Any]:
        return {"type": "user", "message": {"role": "user", "content": text}}

    stdin.send(user("first"))
    first = next(reading)
    assert not channel.came_before(first, 0.0)  # nothing ran before it: a turn of its own
    for text in ("second", "third"):
        stdin.send(user(text))
    deadline = time.monotonic() + 5
    while channel._messages.qsize() < 2:  # until the channel has read both
        assert time.monotonic() < deadline, "the channel did not read the two messages"
        time.sleep(0.01)
    turn_ended = time.monotonic()
    stdin.send(user("fourth"))  # after the turn: it waits for the next one
    second = next(reading)
    assert channel.came_before(second, turn_ended)
    assert [m["message"]["content"] for m in channel.waiting_since(turn_ended, lambda m: True)] == ["third"]
    stdin.close()
    assert [m["message"]["content"] for m in reading] == ["fourth"]
