"""Hooks as the tests set them up and check them: a `Settings` holding hooks (in process), a project settings file
running HookLab's script (tests/support/hookscript.py) for some events, and each event's payload as Claude Code
documents it, with the check of one logged call against it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentteams.settings.load import typed
from agentteams.settings.types import Settings, Source
from tests.support.headless import KEY
from tests.support.hookscript import HookLab

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


def configure(work: Path, lab: HookLab, events: tuple[str, ...]) -> None:
    (work / ".claude").mkdir(exist_ok=True)
    hooks = lab.settings(dict.fromkeys(events, ""))
    (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def settings_with(hooks: dict[str, object], path: str = "/p/.claude/settings.json") -> Settings:
    origins = {f"hooks.{e}[{i}]": Source("project", path) for e, gs in hooks.items() for i in range(len(gs))}  # type: ignore[arg-type]
    return typed({"hooks": hooks}, origins)
