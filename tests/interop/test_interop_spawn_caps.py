"""Interop tier: spawn caps and forks, ours beside the real Claude Code 2.1.332 on the same scripts (issue 31, item
3): each cap refuses in the same words, the caps follow the same variables, CLAUDE_CODE_MAX_SUBAGENTS_PER_SESSION
caps nothing in either, and each CLI's fork reads its caller's prompt cache on its first request."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.mockapi.app import Record
from agentteams.tools.spawn_limits import FORK_IN_FORK, concurrency_refusal, depth_refusal
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support import spawn_scripts as sp
from tests.support.cli import Cli

pytestmark = pytest.mark.timeout(300)


def run(binary: str, root: Path, script: dict[str, Any], env: dict[str, str] | None = None) -> list[Record]:
    """One `-p` run of `binary` against `script`, in a fresh config home; the requests it made."""
    config, cwd = root / "cfg", root / "work"
    cwd.mkdir(parents=True)
    rc.seed_home(config, [cwd], rc.NEWEST)
    with MockServer(script) as server:
        argv = [binary, "-p", "--dangerously-skip-permissions", "--", sp.MAIN]
        proc = subprocess.run(argv, cwd=cwd, env=rc.claude_env(config, server.base_url, extra=env),
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        requests = server.requests
    assert proc.returncode == 0, f"{binary}: {proc.stderr[-2000:]}"
    return requests


def both(claude: Path, cli: Cli, root: Path, name: str, script: dict[str, Any],
         env: dict[str, str] | None = None) -> tuple[list[Record], list[Record]]:  # fmt: skip
    return (run(str(claude), root / f"{name}-claude", script, env),
            run(cli.argv()[0], root / f"{name}-ours", script, env))  # fmt: skip


def offered(records: list[Record]) -> dict[str, bool]:
    """Whether each level's first request offered the tool that spawns."""
    return {r["route"]: sp.may_spawn(r) for r in sp.messages_requests(records) if r["turn"] == 0}


@ccv.only(rc.NEWEST)
def test_the_caps_refuse_in_claudes_words_and_follow_its_variables(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path
) -> None:
    # concurrency: the first subagent is still running when it spawns the second
    for records in both(claude, cli, tmp_path, "concurrent", sp.chain_script(),
                        {"CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS": "1"}):  # fmt: skip
        assert sp.error_results(records, "l1") == [concurrency_refusal(1)], sp.dumped(records)
        assert not sp.messages_requests(records, "l2")
    # depth: the spawning tool is kept from a subagent at the cap (3 by default, or the variable's)
    for records in both(claude, cli, tmp_path, "depth", sp.chain_script()):
        assert offered(records) == {"main": True, "l1": True, "l2": True, "l3": False}, sp.dumped(records)
    depth_1 = {"CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH": "1"}
    for records in both(claude, cli, tmp_path, "depth1", sp.chain_script(), depth_1):
        assert offered(records) == {"main": True, "l1": False}, sp.dumped(records)
    # a fork keeps its caller's tools: at the cap its spawn is refused; and a fork cannot fork
    at_cap = sp.fork_script(sp.agent_call("NESTED work"))
    for records in both(claude, cli, tmp_path, "forkcap", at_cap, depth_1):
        assert sp.error_results(records, "main") == [depth_refusal(1, 1)], sp.dumped(records)
        assert not sp.messages_requests(records, "nested")
    for records in both(claude, cli, tmp_path, "forkfork", sp.fork_script(sp.agent_call("FORKJOB2 again", "fork"))):
        assert sp.error_results(records, "main") == [FORK_IN_FORK], sp.dumped(records)
    # a per-session cap 2.1.332 knows by name only: two spawns under a cap of 1 both run, in either CLI
    for records in both(claude, cli, tmp_path, "session", sp.sequential_script(2),
                        {"CLAUDE_CODE_MAX_SUBAGENTS_PER_SESSION": "1"}):  # fmt: skip
        assert sp.error_results(records) == [] and len(sp.messages_requests(records, "worker")) == 2


@ccv.only(rc.NEWEST)
def test_agent_calls_of_one_answer_run_side_by_side_and_the_third_past_a_cap_of_2_is_refused(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path
) -> None:
    hold = 2.5  # seconds each subagent takes to answer
    cap = {"CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS": "2"}
    # claude's foreground (run_in_background: false) and its default (in -p, the background, in ours too): in
    # either, the first two run at once and the third is refused, in the same words
    for background in (False, None):
        script = sp.side_by_side_script(3, background, hold_ms=int(hold * 1000))
        claude_records, ours = both(claude, cli, tmp_path, f"side-{background}", script, cap)
        for records in (claude_records, ours):
            assert sp.refused_calls(records, "main") == {"toolu_side_2": concurrency_refusal(2)}, sp.dumped(records)
            workers = sp.messages_requests(records, "worker")
            assert sp.workers_started(records) == ["WORKER0", "WORKER1"]
            assert abs(workers[0]["ts"] - workers[1]["ts"]) < hold
        # in the foreground each CLI's next request waits for both subagents and carries both reports
        for records in (claude_records, ours) if background is False else ():
            after = sp.messages_requests(records, "main")[1]
            assert after["ts"] >= max(w["ts"] for w in sp.messages_requests(records, "worker")) + hold
            reports = [t for t in sp.tool_result_texts([after], "main") if "worker done" in t]
            assert len(reports) == 2, sp.tool_result_texts([after], "main")


@ccv.only(rc.NEWEST)
def test_each_clis_fork_reads_its_callers_cache_on_its_first_request(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path
) -> None:
    for records in both(claude, cli, tmp_path, "fork", sp.fork_script()):
        caller = sp.messages_requests(records, "main")[0]
        fork = sp.messages_requests(records, "fork")[0]
        assert fork["body"]["tools"] == caller["body"]["tools"]
        written, read = sp.usage(caller)["cache_creation_input_tokens"], sp.usage(fork)["cache_read_input_tokens"]
        assert read >= written > 0, (sp.usage(caller), sp.usage(fork))
