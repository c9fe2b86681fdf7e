"""`agentteams -p --max-budget-usd` as a real process against the scripted server: as Claude Code, no model call
once the session has spent the budget; the result is `error_max_budget_usd` with its words; a bad figure is one
line; the real Claude Code (interop) stops after as many calls with the same result."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import KEY, agentteams, tool

EXPENSIVE = {"input_tokens": 100_000, "output_tokens": 1000}  # about $0.32 a call at sonnet's prices


def test_the_run_stops_before_the_call_past_its_budget(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("draft\n")
    read = {"content": [tool("Read", file_path="notes.txt")], "usage": EXPENSIVE}
    spec = {"routes": [{"name": "main", "match": {"tools": True}, "turns": [
        read, read, {"content": [{"type": "text", "text": "never asked"}]}]}]}  # fmt: skip
    with MockServer(spec) as server:
        proc = agentteams(cli, tmp_path, "-p", "read it", "--max-budget-usd", "0.5", "--output-format", "json",
                          base_url=server.base_url)  # fmt: skip
        calls = [r for r in server.requests if r["path"].startswith("/v1/messages") and r.get("route") == "main"]
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["subtype"], result["is_error"], result["num_turns"]) == ("error_max_budget_usd", True, 2)
    assert result["errors"] == ["Reached maximum budget ($0.5)"]
    assert 0.5 <= result["total_cost_usd"] < 1.0 and len(calls) == 2  # the third call was never made


def test_the_answer_that_spends_the_budget_ends_the_run_and_its_tool_is_not_run(cli: Cli, tmp_path: Path) -> None:
    touch = {"content": [tool("Bash", command="touch ran.txt", description="touch")], "usage": EXPENSIVE}
    cases: list[tuple[dict[str, Any], list[str]]] = [
        (touch, []),
        ({"content": [{"type": "text", "text": "costly"}], "usage": EXPENSIVE}, []),
    ]
    for answer, files in cases:
        spec = {"routes": [{"name": "main", "match": {"tools": True}, "turns": [answer, "never asked"]}]}
        with MockServer(spec) as server:
            proc = agentteams(cli, tmp_path, "-p", "go", "--max-budget-usd", "0.1", "--output-format", "json",
                              "--dangerously-skip-permissions", base_url=server.base_url)  # fmt: skip
        result = json.loads(proc.stdout)
        assert (result["subtype"], result["num_turns"], proc.returncode) == ("error_max_budget_usd", 1, 1)
        assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".txt") == files  # Bash never ran


def test_the_budget_holds_when_a_program_drives_without_p(cli: Cli, tmp_path: Path) -> None:
    """The Agent SDKs start the CLI with --input-format stream-json and no -p: the budget holds there too."""
    spec = {"routes": [{"name": "main", "match": {"tools": True}, "turns": [
        {"content": [{"type": "text", "text": "costly"}], "usage": EXPENSIVE}]}]}  # fmt: skip
    prompt = json.dumps({"type": "user", "message": {"role": "user", "content": "go"}, "parent_tool_use_id": None})
    with MockServer(spec) as server:
        proc = agentteams(cli, tmp_path, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                          "--max-budget-usd", "0.1", base_url=server.base_url, stdin=prompt + "\n")  # fmt: skip
    result = [json.loads(line) for line in proc.stdout.splitlines() if '"result"' in line][-1]
    assert (result["subtype"], result["errors"]) == ("error_max_budget_usd", ["Reached maximum budget ($0.1)"])


def test_a_bad_budget_is_one_clear_line(cli: Cli, tmp_path: Path) -> None:
    for bad in ("0", "-1", "lots"):
        proc = agentteams(cli, tmp_path, "-p", "hi", "--max-budget-usd", bad, base_url="http://127.0.0.1:9", key=KEY)
        assert proc.returncode != 0
        assert proc.stderr.strip().splitlines()[-1].endswith("--max-budget-usd must be a number greater than 0")
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("claude_version", [rc.DEFAULT])
def test_real_claude_stops_after_the_same_calls_with_the_same_result(
    claude: Path, claude_version: str, config_root: Path, cli: Cli, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "notes.txt").write_text("draft\n")
    read = {"content": [tool("Read", file_path=str(proj / "notes.txt"))], "usage": EXPENSIVE}
    route = rc.main_route("main", "BUDGETMARK", [read, read, "never asked"])
    ours_args = ("-p", "BUDGETMARK read it", "--max-budget-usd", "0.5", "--output-format", "json")
    rc.seed_home(config_root, [proj], claude_version)
    results = {}
    for who in ("claude", "ours"):
        with MockServer({"routes": [route]}) as server:
            if who == "claude":
                env = rc.claude_env(config_root, server.base_url)
                proc = subprocess.run([str(claude), *ours_args], cwd=proj, env=env, capture_output=True, text=True,
                                      timeout=90, check=False)  # fmt: skip
            else:
                proc = agentteams(cli, proj, *ours_args, base_url=server.base_url)
            calls = len([r for r in server.requests if r.get("route") == "main"])
        out = json.loads(proc.stdout)
        results[who] = (proc.returncode, out["subtype"], out["is_error"], out["num_turns"], out["errors"], calls)
    assert results["ours"] == results["claude"] == (1, "error_max_budget_usd", True, 2,
                                                    ["Reached maximum budget ($0.5)"], 2)  # fmt: skip
