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
from tests.support.hookscript import HookLab
from tests.support.procs import pid_alive
from tests.test_e2e_headless import KEY, agentteams, result_text, script, tool, tool_results

# Claude Code's documented hook inputs (code.claude.com/docs/en/hooks, the agent-teams page for the team events),
# with what the real 2.1.330 adds (duration_ms, Stop's two lists, and `prompt_id` in every payload after a
# person's prompt: never a teammate's; its `effort` is left out: agentteams has no effort levels); the last three
# events are ours, in the same conventions
COMMON = ("session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name")
TASK = ("task_id", "task_subject", "task_description", "teammate_name", "team_name")
DOCUMENTED: dict[str, tuple[str, ...]] = {
    "PreToolUse": (*COMMON, "tool_name", "tool_input", "tool_use_id"),
    "PostToolUse": (*COMMON, "tool_name", "tool_input", "tool_response", "tool_use_id", "duration_ms"),
    "UserPromptSubmit": (*COMMON, "prompt"),
    "Stop": (*COMMON, "stop_hook_active", "last_assistant_message", "background_tasks", "session_crons"),
    "SessionStart": ("session_id", "transcript_path", "cwd", "hook_event_name", "source", "model"),
    "SessionEnd": ("session_id", "transcript_path", "cwd", "hook_event_name", "reason"),
    "Notification": (*COMMON, "message", "notification_type"),
    "TeammateIdle": (*COMMON, "teammate_name", "team_name"),
    "TaskCreated": (*COMMON, *TASK),
    "TaskCompleted": (*COMMON, *TASK),
    "TeammateSpawned": (*COMMON, "teammate_name", "team_name", "agent_id", "agent_type", "backend"),
    "TeammateDied": (*COMMON, "teammate_name", "team_name", "agent_id", "reason"),
    "TeamDeleted": (*COMMON, "team_name"),
}
TYPES: dict[str, type | tuple[type, ...]] = {
    "session_id": str, "transcript_path": str, "cwd": str, "permission_mode": str, "hook_event_name": str,
    "tool_name": str, "tool_input": dict, "tool_use_id": str, "tool_response": dict, "prompt": str,
    "stop_hook_active": bool, "last_assistant_message": str, "source": str, "model": str, "reason": str,
    "teammate_name": str, "team_name": str, "task_id": str, "task_subject": str, "task_description": str,
    "agent_id": (str, type(None)), "agent_type": str, "backend": str, "prompt_id": str, "duration_ms": int,
    "background_tasks": list, "session_crons": list, "message": str, "notification_type": str,
}  # fmt: skip


def check_payload(entry: dict[str, Any], cwd: Path) -> dict[str, Any]:
    """One logged hook call against the table: exactly the documented keys, each of its type; the common
    fields' values; no credential in the hook's environment or on its stdin."""
    event: str = entry["event"]
    payload: dict[str, Any] = entry["payload"]
    expected = [*DOCUMENTED[event], *(["prompt_id"] if "prompt_id" in payload else [])]
    assert sorted(payload) == sorted(expected), f"{event}: {sorted(payload)}"
    for key, value in payload.items():
        assert isinstance(value, TYPES[key]), f"{event}.{key} = {value!r}"
    assert payload["hook_event_name"] == event and payload["cwd"] == str(cwd)
    assert payload["transcript_path"].endswith(f"{payload['session_id']}.jsonl")
    assert entry["key_vars"] == [] and KEY not in entry["raw"], f"{event}: a hook saw the API key"
    assert entry["project_dir"] == str(cwd) and entry["cwd"] == str(cwd)
    return payload


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
