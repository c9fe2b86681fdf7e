"""The Agent SDKs' thinking, effort, beta, task-budget, prompt-file and hook-event flags on a real `agentteams`
process against the scripted server: what each puts in the request or on stdout, and how a bad one is refused."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import KEY, agentteams, script, serve, tool
from tests.support.stream_json import STREAM_ARGS, sdk_user_line


def main_requests(server: MockServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if r["path"].startswith("/v1/messages") and r["body"].get("tools")]


def test_the_flags_shape_the_request_and_unasked_the_model_gets_its_defaults(
    cli: Cli, work: Path, servers: list[MockServer]
) -> None:
    server = serve(servers, script("ok", "ok"))
    asked = ("--model", "claude-sonnet-4-5", "--max-thinking-tokens", "5000", "--thinking-display", "summarized",
             "--effort", "high", "--task-budget", "20000", "--betas", "context-1m-2025-08-07")  # fmt: skip
    for args in (asked, ("--model", "claude-sonnet-4-5")):
        proc = agentteams(cli, work, "-p", "hi", *args, base_url=server.base_url)
        assert proc.returncode == 0, proc.stderr
    given, plain = main_requests(server)
    assert given["body"]["thinking"] == {"type": "enabled", "budget_tokens": 5000, "display": "summarized"}
    assert given["body"]["max_tokens"] == 32_000
    assert given["body"]["output_config"] == {"task_budget": {"type": "tokens", "total": 20_000}}  # no effort here
    header = given["headers"]["anthropic-beta"].split(",")
    assert {"context-1m-2025-08-07", "task-budgets-2026-03-13"} <= set(header) and "effort-2025-11-24" not in header
    # nothing asked: the model's own (2.1.332's for sonnet 4.5 in -p: its whole budget, thinking not shown)
    assert plain["body"]["thinking"] == {"type": "enabled", "budget_tokens": 31_999, "display": "omitted"}
    assert plain["body"]["max_tokens"] == 32_000 and "output_config" not in plain["body"]


def test_effort_reaches_a_model_that_takes_it(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, script("ok"))
    proc = agentteams(cli, work, "-p", "hi", "--model", "opus", "--effort", "xhigh", base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    [request] = main_requests(server)
    assert request["body"]["output_config"] == {"effort": "xhigh"}
    assert "effort-2025-11-24" in request["headers"]["anthropic-beta"]


def test_prompt_files_are_read_and_joined_with_the_flags(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    (work / "sys.txt").write_text("FILE-SYS\n")
    (work / "app.txt").write_text("FILE-APP\n")
    server = serve(servers, script("ok"))
    proc = agentteams(cli, work, "-p", "hi", "--system-prompt-file", "sys.txt", "--append-system-prompt-file",
                      "app.txt", "--append-system-prompt", "X", base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [request] = main_requests(server)
    assert "".join(b["text"] for b in request["body"]["system"]) == "FILE-SYS\n\n\nFILE-APP\n\nX"


def test_a_missing_prompt_file_is_one_line_and_exit_1(cli: Cli, work: Path) -> None:
    for flag, what in (("--system-prompt-file", "System"), ("--append-system-prompt-file", "Append system")):
        proc = agentteams(cli, work, "-p", "hi", flag, "nope.txt", base_url="http://127.0.0.1:9")
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr.strip().splitlines() == [f"agentteams: error: {what} prompt file not found: {work}/nope.txt"]


def hook_lines(cli: Cli, work: Path, servers: list[MockServer], *flags: str) -> list[str]:
    hook = [{"matcher": "", "hooks": [{"type": "command", "command": "echo OUT; echo ERR >&2"}]}]
    events = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
    settings = {"hooks": dict.fromkeys(events, hook)}
    (work / ".claude").mkdir(exist_ok=True)
    (work / ".claude" / "settings.json").write_text(json.dumps(settings))
    server = serve(servers, script(tool("Bash", command="echo RAN"), "done"))
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}
    argv = cli.argv(*STREAM_ARGS, "--dangerously-skip-permissions", *flags)
    proc = subprocess.run(argv, env=env, cwd=work, input=sdk_user_line("hi"), capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    responses = [e for e in lines if e.get("subtype") == "hook_response"]
    assert all(e["output"] == "OUT\nERR\n" and e["outcome"] == "success" and e["exit_code"] == 0 for e in responses)
    return [f"{e['subtype']} {e['hook_name']}" for e in lines if e.get("subtype", "").startswith("hook_")]


def test_hook_runs_are_lines_with_include_hook_events(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    start = ["hook_started SessionStart:startup", "hook_response SessionStart:startup"]
    assert hook_lines(cli, work, servers) == start  # SessionStart's always, as the real CLI's
    named = ["UserPromptSubmit", "PreToolUse:Bash", "PostToolUse:Bash", "Stop"]
    assert hook_lines(cli, work, servers, "--include-hook-events") == start + [
        f"{kind} {name}" for name in named for kind in ("hook_started", "hook_response")
    ]
