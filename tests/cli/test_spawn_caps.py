"""Spawn caps and forks in `agentteams -p` (issue 31, item 3), with claude's variables and refusals: the concurrent
cap counts a subagent still running while it spawns, the depth cap takes the spawning tool from a subagent at the
cap and refuses a fork there, a fork cannot fork, and a fork starts from its caller's conversation so that its first
request reads the caller's prompt cache (the scripted server's usage figures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from agentteams.mockapi.usage import strip_cache_control
from agentteams.tools.spawn_limits import FORK_IN_FORK, concurrency_refusal, depth_refusal
from tests.support import spawn_scripts as sp
from tests.support.cli import Cli
from tests.support.headless import agentteams, serve


def run(cli: Cli, work: Path, servers: list[MockServer], script: dict[str, object]) -> MockServer:
    server = serve(servers, script)
    proc = agentteams(cli, work, "-p", sp.MAIN, "--dangerously-skip-permissions", base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    return server


def test_a_spawn_past_the_concurrent_cap_is_refused_in_claudes_words(
    cli: Cli, tmp_path: Path, servers: list[MockServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS", "1")
    server = run(cli, tmp_path, servers, sp.chain_script())
    assert sp.error_results(server.requests, "l1") == [concurrency_refusal(1)], sp.dumped(server.requests)
    assert not sp.messages_requests(server.requests, "l2")  # nothing started past the cap


def test_agent_calls_of_one_answer_run_side_by_side_and_the_third_past_a_cap_of_2_is_refused(
    cli: Cli, tmp_path: Path, servers: list[MockServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS", "2")
    hold = 2.5
    server = run(cli, tmp_path, servers, sp.side_by_side_script(3, False, hold_ms=int(hold * 1000)))  # foreground
    # one at a time, the cap of 2 would never be reached: the refusal says two were running when the third began,
    # and the answer's order says which one it is, as in claude 2.1.332
    assert sp.refused_calls(server.requests, "main") == {"toolu_side_2": concurrency_refusal(2)}
    workers = sp.messages_requests(server.requests, "worker")
    assert sp.workers_started(server.requests) == ["WORKER0", "WORKER1"]
    assert abs(workers[0]["ts"] - workers[1]["ts"]) < hold, "the second subagent waited for the first"
    # the answer's results go back together, once every subagent has answered
    [_, after] = sp.messages_requests(server.requests, "main")
    assert after["ts"] >= max(w["ts"] for w in workers) + hold
    assert sp.tool_result_texts(server.requests, "main").count("worker done") == 2


def test_the_depth_cap_follows_its_variable(
    cli: Cli, tmp_path: Path, servers: list[MockServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = run(cli, tmp_path, servers, sp.chain_script())  # claude's default: 3
    offered = {r["route"]: sp.may_spawn(r) for r in sp.messages_requests(server.requests) if r["turn"] == 0}
    assert offered == {"main": True, "l1": True, "l2": True, "l3": False}, sp.dumped(server.requests)
    monkeypatch.setenv("CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH", "1")
    server = run(cli, tmp_path, servers, sp.chain_script())
    offered = {r["route"]: sp.may_spawn(r) for r in sp.messages_requests(server.requests) if r["turn"] == 0}
    assert offered == {"main": True, "l1": False}, sp.dumped(server.requests)


def test_a_fork_starts_from_its_callers_conversation_and_reads_its_cache(
    cli: Cli, tmp_path: Path, servers: list[MockServer]
) -> None:
    server = run(cli, tmp_path, servers, sp.fork_script())
    caller = sp.messages_requests(server.requests, "main")[0]
    [fork] = sp.messages_requests(server.requests, "fork")
    for key in ("model", "system", "tools", "max_tokens"):
        assert strip_cache_control(fork["body"][key]) == strip_cache_control(caller["body"][key]), key
    sent, inherited = caller["body"]["messages"], fork["body"]["messages"]
    assert strip_cache_control(inherited[: len(sent)]) == strip_cache_control(sent)
    assert inherited[len(sent)] == {"role": "assistant", "content": caller["response"]["content"]}
    assert "FORKJOB summarize the plan" in inherited[-1]["content"][-1]["text"]
    used = sp.usage(fork)
    assert used["cache_read_input_tokens"] >= sp.usage(caller)["cache_creation_input_tokens"] > 0, used
    # its report reaches the caller (in the background by default, as claude's: in the notice of its end)
    assert "fork done" in json.dumps([r["body"]["messages"] for r in sp.messages_requests(server.requests, "main")])


def test_a_fork_at_the_depth_cap_and_a_fork_of_a_fork_are_refused(
    cli: Cli, tmp_path: Path, servers: list[MockServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = run(cli, tmp_path, servers, sp.fork_script(sp.agent_call("FORKJOB2 again", "fork")))
    assert FORK_IN_FORK in sp.error_results(server.requests), sp.dumped(server.requests)
    monkeypatch.setenv("CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH", "1")
    server = run(cli, tmp_path, servers, sp.fork_script(sp.agent_call("NESTED work")))
    assert depth_refusal(1, 1) in sp.error_results(server.requests), sp.dumped(server.requests)
    assert not sp.messages_requests(server.requests, "nested")


def test_fork_is_not_offered_when_its_variable_is_off(
    cli: Cli, tmp_path: Path, servers: list[MockServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_FORK_SUBAGENT", "0")
    server = run(cli, tmp_path, servers, sp.fork_script())
    caller = sp.messages_requests(server.requests, "main")[0]
    [task] = [t for t in caller["body"]["tools"] if t["name"] == "Task"]
    assert "fork" not in task["input_schema"]["properties"]["subagent_type"]["enum"]
    assert any("unknown subagent_type 'fork'" in e for e in sp.error_results(server.requests))
    assert not sp.messages_requests(server.requests, "fork")
