"""Hooks end to end: `agentteams -p` as a real process with a project settings file whose hooks run a real script,
against the scripted server: what the model sees, what the hooks were given (field by field against Claude Code's
documented payloads), that no hook sees the key, and that a hanging hook is killed at its timeout."""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import agentteams, result_text, script, tool, tool_results
from tests.support.hooks import check_payload
from tests.support.hookscript import HookLab
from tests.support.procs import pid_alive


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    d = tmp_path / "repo"
    (d / ".claude").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(d)], check=True)
    return d


def configure(repo: Path, hooks: dict[str, Any]) -> None:
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def model_requests(server: MockServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if r["path"].startswith("/v1/messages")]


def test_hooks_around_tools_prompt_and_turn_end(cli: Cli, repo: Path, tmp_path: Path) -> None:
    lab = HookLab(tmp_path / "lab")
    events = {"PreToolUse": "Bash", "PostToolUse": "Bash|Edit", "UserPromptSubmit": "", "Stop": "",
              "SessionStart": "startup", "SessionEnd": "*"}  # fmt: skip
    configure(repo, lab.settings(events))
    lab.answer(
        {"event": "PreToolUse", "when": "BLOCKME", "stderr": "BLOCKME is not allowed here", "exit": 2},
        {"event": "PreToolUse", "when": "DENYME", "stdout": {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "DENY-REASON"}}},
        {"event": "PreToolUse", "when": "ALLOWME", "stdout": {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow"}}},
        {"event": "PostToolUse", "stdout": {"hookSpecificOutput": {
            "hookEventName": "PostToolUse", "additionalContext": "POST-CONTEXT from the hook"}}},
        {"event": "UserPromptSubmit", "stdout": "PROMPT-CONTEXT from the hook"},
        {"event": "SessionStart", "stdout": "SESSION-CONTEXT from the hook"},
        {"event": "Stop", "when": '"stop_hook_active": false', "stderr": "STOP-FEEDBACK: say more", "exit": 2},
    )  # fmt: skip
    spec = script(
        tool("Bash", command="echo BLOCKME"), tool("Bash", command="echo DENYME"),
        tool("Bash", command="echo ALLOWME-RAN"), "first answer", "final answer",
    )  # fmt: skip
    with MockServer(spec) as server:
        proc = agentteams(cli, repo, "-p", "go", base_url=server.base_url)  # no allow rule: -p denies Bash
        requests = model_requests(server)
        blocked, denied, allowed = tool_results(server)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "final answer"
    assert blocked["is_error"] and "BLOCKME is not allowed here" in result_text(blocked)  # exit 2: stderr to model
    assert denied["is_error"] and "DENY-REASON" in result_text(denied)
    assert not allowed.get("is_error") and "ALLOWME-RAN" in result_text(allowed)  # the hook's allow: no prompt
    assert "POST-CONTEXT from the hook" in result_text(allowed)
    first = json.dumps(requests[0]["messages"])
    assert "PROMPT-CONTEXT from the hook" in first and "SESSION-CONTEXT from the hook" in first
    assert "STOP-FEEDBACK: say more" in json.dumps(requests[-1]["messages"][-1])  # the turn went on
    assert len(requests) == 5
    calls = lab.entries()
    assert [e["event"] for e in calls] == [
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PreToolUse", "PreToolUse", "PostToolUse", "Stop",
        "Stop", "SessionEnd",
    ]  # fmt: skip
    payloads = [check_payload(e, repo) for e in calls]
    assert len({p["session_id"] for p in payloads}) == 1
    pre, post = payloads[4], payloads[5]
    assert pre["tool_name"] == "Bash" and pre["tool_input"] == {"command": "echo ALLOWME-RAN"}
    assert pre["tool_use_id"] == post["tool_use_id"] == allowed["tool_use_id"]
    assert "ALLOWME-RAN" in post["tool_response"]["stdout"]
    [prompt_id] = {p.get("prompt_id") for p in payloads[1:]}  # one prompt: every event after it names it
    assert prompt_id is not None and "prompt_id" not in payloads[0]
    assert payloads[1]["prompt"] == "go" and payloads[0]["source"] == "startup"
    assert [p["stop_hook_active"] for p in payloads[6:8]] == [False, True]
    assert payloads[7]["last_assistant_message"] == "final answer" and payloads[8]["reason"] == "other"


def test_a_blocked_prompt_never_reaches_the_model(cli: Cli, repo: Path, tmp_path: Path) -> None:
    lab = HookLab(tmp_path / "lab")
    configure(repo, lab.settings({"UserPromptSubmit": ""}))
    lab.answer({"event": "UserPromptSubmit", "stderr": "NO-PROMPTS-TODAY", "exit": 2})
    with MockServer(script("never")) as server:
        proc = agentteams(cli, repo, "-p", "go", base_url=server.base_url)
        requests = model_requests(server)
    assert proc.returncode == 1 and requests == []
    assert "NO-PROMPTS-TODAY" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    [entry] = lab.entries()
    check_payload(entry, repo)


def test_a_hanging_hook_is_killed_at_its_timeout(cli: Cli, repo: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "sleeper.pid"
    hang = f"sleep 60 & echo $! > {shlex.quote(str(pid_file))}; wait"
    configure(
        repo, {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hang, "timeout": 1}]}]}
    )
    with MockServer(script(tool("Bash", command="echo STILL-RAN"), "done")) as server:
        start = time.monotonic()
        proc = agentteams(cli, repo, "-p", "go", "--allowedTools", "Bash", base_url=server.base_url)
        took = time.monotonic() - start
        [result] = tool_results(server)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done" and "STILL-RAN" in result_text(result)  # the agent went on
    assert "PreToolUse hook" in proc.stderr and "timed out after 1s" in proc.stderr
    assert took < 20, f"the run took {took:.1f} s"
    print(f"\n[hooks] a -p run with a hook hanging past its 1 s timeout: {took:.2f} s")
    assert not pid_alive(int(pid_file.read_text())), "the hook's child outlived its timeout"
