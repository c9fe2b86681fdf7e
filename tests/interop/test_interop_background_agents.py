"""Interop tier, background subagents: an Agent call that does not say `run_in_background: false` runs in the
background in claude 2.1.332's -p and in ours: the call answers at once with the agent's id, the caller's turn goes
on and ends, and the subagent's report comes as a task notification that starts a turn of its own; each turn's answer
is printed (text), the last one's result carries its index and origin (json), and stream-json tells the agent's
start, end and notice, with a result line per turn. A driven (SDK) session writes the notice's turn and its result
as soon as it ends."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import KEY, tool
from tests.support.procs import stdin_session
from tests.support.script_runs import SIDE, both
from tests.support.stream_json import STREAM_ARGS, sdk_user_line

pytestmark = pytest.mark.timeout(180)
REPORT = "sub report here"
CALL = tool("Agent", description="look around", prompt="SUBTASK look", subagent_type="general-purpose")
SCRIPT: dict[str, Any] = {"routes": [
    # the subagent answers after the caller's turn has ended (its request waits 1.5 s)
    {"name": "sub", "match": {"tools": True, "first_user": "SUBTASK"},
     "turns": [{"content": [{"type": "text", "text": REPORT}], "delay_ms": 1500}]},
    {"name": "main", "match": {"tools": True}, "turns": [
        {"content": [{"type": "text", "text": "starting"}, CALL]},
        {"content": [{"type": "text", "text": "main waiting"}]},
        {"content": [{"type": "text", "text": "main got notified"}]}]},
    SIDE]}  # fmt: skip


def _mains(server: MockServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests
            if r["body"].get("tools") and "SUBTASK" not in json.dumps(r["body"]["messages"][0])]  # fmt: skip


def _delivery(server: MockServer) -> tuple[bool, bool, bool]:
    """Whether the call's result came at once (no report), and whether a later request of the caller carried a
    completed notice with the report under the agent id that result named."""
    mains = _mains(server)
    launched = json.dumps(mains[1]["messages"][-1])
    agent = re.search(r"agentId: (a[0-9a-f]{16})", launched)
    notice = json.dumps(mains[-1]["messages"][-1])
    named = agent is not None and f"<task-id>{agent[1]}</task-id>" in notice
    carried = "<status>completed</status>" in notice and f"<result>{REPORT}</result>" in notice
    return REPORT not in launched, named, carried


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("output", ["text", "json", "stream-json"])
def test_an_agent_call_runs_in_the_background_as_claudes(claude: Path, cli: Cli, tmp_path: Path, proj: Path,
                                                         servers: list[MockServer], output: str) -> None:  # fmt: skip
    verbose = ["--verbose"] if output == "stream-json" else []
    seen = {}
    for which, proc, server in both(claude, cli, tmp_path, proj, servers, SCRIPT, "-p", "go", "--output-format",
                                    output, *verbose):  # fmt: skip
        assert proc.returncode == 0, (which, proc.stderr)
        said: Any = proc.stdout
        if output != "text":
            lines = [json.loads(line) for line in proc.stdout.splitlines()]
            results = [(r["result"], r["result_index"], r.get("origin", {}).get("kind"),
                        r["subagent_stats"]["requested"], r["subagent_stats"]["started_in_background"])
                       for r in lines if r["type"] == "result"]  # fmt: skip
            told = [(line["subtype"], line.get("is_backgrounded"), line.get("status"), line.get("summary"))
                    for line in lines if line["type"] == "system"
                    and line["subtype"] in ("task_started", "task_updated", "task_notification")]  # fmt: skip
            said = (results, told)
        seen[which] = (said, _delivery(server))
    assert seen["ours"] == seen["claude"], seen
    if output == "text":
        assert seen["ours"][0] == "main waiting\n\nmain got notified\n"
    assert seen["ours"][1] == (True, True, True)


def _session(argv: list[str], env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    """A driven session's lines for one prompt, up to the result of the turn its background agent's notice began."""
    proc = subprocess.Popen([*argv, *STREAM_ARGS], env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[dict[str, Any]] = []
    with stdin_session(proc):
        proc.stdin.write(sdk_user_line("go"))
        proc.stdin.flush()
        while sum(1 for line in lines if line["type"] == "result") < 2:
            line = proc.stdout.readline()
            assert line, f"stdout closed before the notice's result: {lines}"
            lines.append(json.loads(line))
    return lines


@ccv.only(rc.NEWEST)
def test_a_driven_session_reports_the_notices_turn_at_once(claude: Path, cli: Cli, tmp_path: Path, proj: Path,
                                                           servers: list[MockServer]) -> None:  # fmt: skip
    config = tmp_path / "real-config"
    rc.seed_home(config, [proj], rc.NEWEST)
    seen = {}
    for which in ("claude", "ours"):
        server = MockServer(SCRIPT).start()
        servers.append(server)
        if which == "claude":
            argv, env = [str(claude)], rc.claude_env(config, server.base_url)
        else:
            argv, env = cli.argv(), {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}
        lines = _session(argv, env, proj)
        kinds = [(line["type"], line.get("subtype")) for line in lines if line["type"] in ("system", "result")
                 and line.get("subtype") not in ("status", "hook_started", "hook_response")]  # fmt: skip
        results = [(r["result"], r["result_index"], r.get("origin", {}).get("kind")) for r in lines
                   if r["type"] == "result"]  # fmt: skip
        seen[which] = (kinds, results, _delivery(server))
    assert seen["ours"] == seen["claude"], seen
    assert seen["ours"][1] == [("main waiting", 0, None), ("main got notified", 1, "task-notification")]
