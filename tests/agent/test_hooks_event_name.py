"""A hook's JSON answer whose `hookSpecificOutput.hookEventName` is missing or names another event, read as Claude Code
2.1.332 reads it: a command's, and an SDK program's callback's (the turn it ends, the call it stops)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentteams.agent.hooks.points import HookPoints
from agentteams.agent.hooks.spec import HookCommand, HookRun, Outcome, interpret
from agentteams.errors import HookAnswerError

WRONG = "Hook returned incorrect event name: expected 'UserPromptSubmit' but got 'SessionStart'"


def command(event: str, answer: dict[str, Any]) -> Outcome:
    return interpret(event, [HookRun(HookCommand(event, "", "cmd"), 0, json.dumps(answer))])


def callback(event: str, answer: dict[str, Any]) -> Outcome:
    hook = HookCommand(event, "", "hook_0", callback=lambda _payload, _timeout: answer)
    return interpret(event, [HookRun(hook, 0, json.dumps(answer))])


def test_a_specific_part_without_an_event_name_voids_the_whole_answer_even_a_block() -> None:
    for read in (command, callback):
        got = read("UserPromptSubmit", {"decision": "block", "reason": "R", "continue": False,
                                        "hookSpecificOutput": {"additionalContext": "CTX"}})  # fmt: skip
        assert (got.blocked, got.stop, got.context, got.failed) == (False, False, [], "")
        assert len(got.warnings) == 1 and got.warnings[0].endswith("no hookEventName: its output was ignored")


def test_another_event_named_keeps_only_a_block_and_what_comes_with_it() -> None:
    answer = {"decision": "block", "reason": "R-BLOCK", "continue": False, "stopReason": "S", "systemMessage": "M",
              "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "CTX"}}  # fmt: skip
    for read in (command, callback):
        got = read("UserPromptSubmit", answer)
        assert (got.blocked, got.reason, got.stop, got.messages, got.context) == (True, "R-BLOCK", True, ["M"], [])
        assert got.failed == ""


@pytest.mark.parametrize("event", ["UserPromptSubmit", "PreToolUse", "PostToolUse"])
def test_another_event_named_without_a_block_voids_a_command_s_answer_and_fails_a_callback(event: str) -> None:
    answer = {"continue": False, "systemMessage": "M",
              "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "CTX",
                                     "permissionDecision": "deny"}}  # fmt: skip
    got = command(event, answer)
    assert (got.blocked, got.stop, got.messages, got.context, got.permission, got.failed) == (
        False, False, [], [], None, "")  # fmt: skip
    assert got.warnings[0].startswith(f"Hook returned incorrect event name: expected '{event}' but got 'SessionStart'")
    failed = callback(event, answer)
    assert failed.failed.startswith(f"Hook returned incorrect event name: expected '{event}' but got 'SessionStart'")
    assert '"additionalContext": "CTX"' in failed.failed  # the answer shown in full, as Claude Code does
    assert (failed.blocked, failed.stop, failed.context, failed.permission) == (False, False, [], None)


class _Runner:
    """A runner with one callback's answer for every event."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.answer, self.warned = answer, list[str]()

    def fire(self, event: str, fields: dict[str, Any], match: str | None = None) -> Outcome:
        return callback(event, self.answer)

    def new_prompt(self) -> None:
        pass

    def warn(self, line: str) -> None:
        self.warned.append(line)


def test_a_callback_naming_another_event_ends_the_prompt_stops_the_call_and_lets_post_tool_go_on() -> None:
    from agentteams.tools.base import ToolResult

    points = HookPoints(_Runner({"hookSpecificOutput": {"hookEventName": "SessionStart"}}))  # type: ignore[arg-type]
    with pytest.raises(HookAnswerError, match=WRONG):
        points.submitted("hi")
    pre = points.pre_tool("Bash", {"command": "ls"}, "toolu_1")
    assert pre.blocked and "not run" in pre.reason and pre.permission is None
    assert points.post_tool("Bash", {"command": "ls"}, "toolu_1", ToolResult("out"), 3) is None
