"""Claude's spawn caps as ours reads them (tools/spawn_limits.py): the variables, their defaults and bad values, the
running count and its refusal, the answer's order in which calls run side by side take their slots; and a fork's
opening message (agent/subagents.py)."""

from __future__ import annotations

import threading

import pytest

from agentteams.agent.subagents import FORK_STARTED, PARENTS_CALL, fork_opening
from agentteams.tools.spawn_limits import (
    CONCURRENT_VAR,
    DEPTH_VAR,
    FORK_VAR,
    RunningSubagents,
    SpawnLimits,
    StartOrder,
    concurrency_refusal,
    depth_refusal,
)


def test_the_defaults_are_claudes() -> None:
    limits = SpawnLimits.from_env({})
    assert (limits.concurrent, limits.depth, limits.fork) == (20, 3, True)
    assert [limits.may_nest(d) for d in range(5)] == [True, True, True, False, False]


@pytest.mark.parametrize(("value", "read"), [("7", 7), (" 2 ", 2), ("+4", 4), ("1", 1), ("0", 20), ("-3", 20),
                                             ("abc", 20), ("2.5", 20), ("", 20), ("1e3", 20)])  # fmt: skip
def test_a_cap_is_a_whole_number_of_at_least_one_else_the_default(value: str, read: int) -> None:
    # as 2.1.332 reads them: "0", "abc" and " 2" observed (the first two leave 20 subagents, the last allows 2)
    assert SpawnLimits.from_env({CONCURRENT_VAR: value}).concurrent == read
    assert SpawnLimits.from_env({DEPTH_VAR: value}).depth == (3 if read == 20 else read)


@pytest.mark.parametrize(("value", "on"), [("0", False), ("false", False), ("OFF", False), ("1", True), ("", True)])
def test_fork_is_on_unless_its_variable_turns_it_off(value: str, on: bool) -> None:
    assert SpawnLimits.from_env({FORK_VAR: value}).fork is on


def test_the_running_count_refuses_at_the_cap_and_frees_a_slot_once() -> None:
    running = RunningSubagents(SpawnLimits(concurrent=2))
    first, second = running.take(), running.take()
    assert callable(first) and callable(second) and running.count == 2
    assert running.take() == concurrency_refusal(2)
    first()
    first()  # released twice: one slot freed, not two
    assert running.count == 1
    third = running.take()
    assert callable(third) and running.take() == concurrency_refusal(2)


def test_calls_side_by_side_take_their_slots_in_the_answers_order_whichever_thread_comes_first() -> None:
    running, order = RunningSubagents(SpawnLimits(concurrent=2)), StartOrder()
    got: dict[int, str] = {}

    def call(place: int, takes: bool) -> None:
        with order.place(place):
            if takes:
                slot = running.take()
                got[place] = slot if isinstance(slot, str) else "slot"

    # the last call's thread starts first, and place 1 ends without taking (a hook refused it): the last must wait
    # for places 0 and 1, then find the cap of 2 reached only if place 0's slot and another are held
    threads = [threading.Thread(target=call, args=(3, True)), threading.Thread(target=call, args=(2, True))]
    for t in threads:
        t.start()
    assert not got, "a later call took a slot before the earlier ones"
    call(1, False)
    assert not got
    call(0, True)
    for t in threads:
        t.join(10)
    assert got == {0: "slot", 2: "slot", 3: concurrency_refusal(2)}


def test_the_refusals_are_claudes_words() -> None:
    # observed from 2.1.332's Agent tool (the whole is_error result)
    assert concurrency_refusal(1) == (
        "Concurrent subagent limit reached. You can run 1 subagents at once. Do not retry. If the user wants more "
        "concurrent subagents, ask them to increase CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS.")  # fmt: skip
    assert depth_refusal(1, 1) == (
        "Subagent nesting limit reached (depth 1 of 1). Complete this task directly using your tools instead of "
        "spawning another agent. If the user explicitly requested deeper nesting, ask them to raise "
        "CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH.")  # fmt: skip


def test_a_forks_opening_answers_every_call_of_the_answer_that_started_it() -> None:
    answer = {"role": "assistant", "content": [
        {"type": "text", "text": "Two things at once."},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}},
        {"type": "tool_use", "id": "t2", "name": "Task", "input": {"prompt": "do X", "subagent_type": "fork"}},
    ]}  # fmt: skip
    opening = fork_opening(answer, "do X")
    assert [(b["type"], b.get("tool_use_id"), b.get("content")) for b in opening[:2]] == [
        ("tool_result", "t1", PARENTS_CALL), ("tool_result", "t2", FORK_STARTED)]  # fmt: skip
    assert opening[2]["type"] == "text" and opening[2]["text"].endswith("Directive: do X")
