"""Hooks as configured (settings' `hooks` key, Claude Code's shape) and what a hook's exit code and output mean:
the typed `HookCommand` list, matchers, `describe` for `/hooks`, and `interpret` of finished runs into an `Outcome`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentteams.settings.types import Settings
from agentteams.store.fs.atomic_json import json_object

# the events agentteams fires: Claude Code's, then ours (team lifecycle, in the same payload conventions); hooks
# of any other event are kept (a newer file's) and listed as never fired
FIRED = (
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "SessionStart", "SessionEnd",
    "PreCompact", "Notification", "TeammateIdle", "TaskCreated", "TaskCompleted", "TeammateSpawned", "TeammateDied",
    "TeamDeleted", "WorktreeCreate", "WorktreeRemove",
)  # fmt: skip
# what the matcher is compared with, per event (Claude Code's docs); events not listed ignore their matcher
MATCHED_ON = {
    "PreToolUse": "tool_name", "PostToolUse": "tool_name", "SessionStart": "source", "SessionEnd": "reason",
    "PreCompact": "trigger", "Notification": "notification_type", "SubagentStop": "agent_type",
}  # fmt: skip
DEFAULT_TIMEOUT = 600.0  # seconds: Claude Code's default for command hooks since 2.1.3 (60 s before)
Permission = Literal["allow", "deny", "ask"]  # a PreToolUse hook's permissionDecision
_PLAIN_MATCHER = re.compile(r"[A-Za-z0-9_|]+")


@dataclass(frozen=True)
class HookCommand:
    """One configured hook: the event, its group's matcher, the shell command, timeout, source file. An SDK program's
    hook (registered by its `initialize`) has `callback` instead: it takes the payload and answers the hook's JSON
    output; `command` then names its callback id."""

    event: str
    matcher: str
    command: str
    timeout: float = DEFAULT_TIMEOUT
    source: str = ""
    callback: Callable[[dict[str, Any], float], dict[str, Any]] | None = field(default=None, compare=False)
    fail_closed: bool = False  # a callback that fails (no answer, an error) blocks, as the program asked


def configured(settings: Settings) -> tuple[list[HookCommand], list[str]]:
    """Every command hook in the merged settings, and one line per entry that is not one (skipped, as Claude
    Code skips a hook it cannot read; unknown events are kept, so a newer file's hooks still show in /hooks)."""
    out: list[HookCommand] = []
    problems: list[str] = []
    for event, groups in settings.hooks.items():
        if not isinstance(groups, list):
            problems.append(f"hooks.{event} must be an array of matcher groups")
            continue
        for i, group in enumerate(groups):
            origin = settings.origins.get(f"hooks.{event}[{i}]")
            where = origin.path if origin else ""
            found, bad = _group(event, group, where)
            out.extend(found)
            problems.extend(f"hooks.{event}[{i}]: {b}" for b in bad)
    return out, problems


def _group(event: str, group: Any, where: str) -> tuple[list[HookCommand], list[str]]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return [], ["a matcher group needs a `hooks` array"]
    matcher = group.get("matcher") or ""
    if not isinstance(matcher, str):
        return [], ["`matcher` must be a string"]
    out: list[HookCommand] = []
    bad: list[str] = []
    for hook in group["hooks"]:
        if not isinstance(hook, dict) or hook.get("type", "command") != "command":
            bad.append(f"only command hooks run here (type {hook.get('type') if isinstance(hook, dict) else hook!r})")
            continue
        command, timeout = hook.get("command"), hook.get("timeout", DEFAULT_TIMEOUT)
        if not isinstance(command, str) or not command.strip():
            bad.append("a command hook needs a `command` string")
            continue
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            bad.append(f"`timeout` must be a positive number of seconds, got {timeout!r}")
            timeout = DEFAULT_TIMEOUT
        out.append(HookCommand(event, matcher, command, float(timeout), where))
    return out, bad


def matches(matcher: str, value: str | None) -> bool:
    """Claude Code's matcher: empty or `*` matches all; letters, digits, `_` and `|` name values exactly;
    anything else is a regular expression searched in the value (`Edit|Write`, `mcp__.*`, `Notebook.*`)."""
    if matcher in ("", "*") or value is None:
        return True
    if _PLAIN_MATCHER.fullmatch(matcher):
        return value in matcher.split("|")
    try:
        return re.search(matcher, value) is not None
    except re.error:
        return False  # a matcher that is not a pattern matches nothing, as a bad RegExp does there


def selected(hooks: Sequence[HookCommand], event: str, value: str | None) -> list[HookCommand]:
    """The hooks of `event` whose matcher takes `value`, identical commands once (Claude Code's dedup)."""
    seen: set[str] = set()
    out: list[HookCommand] = []
    for h in hooks:
        if h.event != event or (event in MATCHED_ON and not matches(h.matcher, value)) or h.command in seen:
            continue
        seen.add(h.command)
        out.append(h)
    return out


def describe(settings: Settings) -> list[str]:
    """One line per configured hook, for `/hooks`: event, matcher, command, timeout and source file."""
    hooks, problems = configured(settings)
    lines = [
        f"{h.event}  matcher={h.matcher or '*'}  {h.command}  (timeout {h.timeout:g}s"
        + (f", {h.source})" if h.source else ")")
        + ("" if h.event in FIRED else "  [never fired by agentteams]")
        for h in hooks
    ]
    return lines + [f"skipped: {p}" for p in problems]


@dataclass
class HookRun:
    """One finished command: its exit code (None when it timed out or could not start) and output."""

    hook: HookCommand
    code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False


@dataclass
class Outcome:
    """What an event's hooks decided together. `blocked` with `reason` is exit 2 or `decision: block` (a deny
    for PreToolUse); `context` goes to the model; `warnings` and `messages` are shown to the person."""

    blocked: bool = False
    reason: str = ""  # for the model: each block as "[command]: stderr" (exit 2) or the JSON `reason`
    said: list[str] = field(default_factory=list)  # for the person: the same blocks' bare text
    context: list[str] = field(default_factory=list)
    permission: Permission | None = None
    permission_reason: str = ""
    updated_input: dict[str, Any] | None = None
    stop: bool = False  # `continue: false`: the agent stops after this
    stop_reason: str = ""
    failed: str = ""  # an SDK callback's answer named another event (and did not block): Claude Code fails with it
    warnings: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


# events whose plain stdout on exit 0 is context for the model (elsewhere it only goes to the debug log); for
# PreCompact it joins the summary's instructions, as Claude Code passes it to the summariser
STDOUT_IS_CONTEXT = ("UserPromptSubmit", "SessionStart", "PreCompact")
STDOUT_IS_ANSWER = ("WorktreeCreate",)  # its plain stdout is the path of the worktree it made (in `context`)
_PERMISSION_RANK = {"deny": 3, "ask": 2, "allow": 1}  # several hooks: deny over ask over allow


def interpret(event: str, runs: Sequence[HookRun]) -> Outcome:
    out = Outcome()
    for run in runs:
        _one(event, run, out)
    return out


def _one(event: str, run: HookRun, out: Outcome) -> None:
    if run.timed_out:
        out.warnings.append(f"{event} hook `{run.hook.command}` timed out after {run.hook.timeout:g}s; killed")
        return
    if run.code == 2:  # the model reads which command said what, as in Claude Code: "[command]: stderr"
        out.blocked = True
        text = run.stderr.strip() or "No stderr output"
        out.reason = _join(out.reason, f"[{run.hook.command}]: {text}")
        out.said.append(text)
        return
    if run.code != 0:
        tail = (run.stderr.strip().splitlines() or [""])[-1][:200]
        status = "could not start" if run.code is None else f"exited {run.code}"
        out.warnings.append(f"{event} hook `{run.hook.command}` {status}" + (f": {tail}" if tail else ""))
        return
    text = run.stdout.strip()
    data = _json_object(text)
    if data is None:
        if text and (event in STDOUT_IS_CONTEXT or event in STDOUT_IS_ANSWER):
            out.context.append(text)
        return
    data = _named(event, run, data, out)
    if data is not None:
        _apply(event, data, out)


def _named(event: str, run: HookRun, data: dict[str, Any], out: Outcome) -> dict[str, Any] | None:
    """The output to apply, by its `hookSpecificOutput.hookEventName` as Claude Code checks it: none named, the whole
    output is ignored; another event named, only a block still holds (without the specific part), else the whole
    output is ignored (a command's) or fails the hook (a callback's, `failed`). None: nothing to apply."""
    if "hookSpecificOutput" not in data:
        return data
    specific = data["hookSpecificOutput"]
    name = specific.get("hookEventName") if isinstance(specific, dict) else None
    if not isinstance(name, str):
        out.warnings.append(f"{event} hook `{run.hook.command}` answered a hookSpecificOutput with no hookEventName: "
                            "its output was ignored")  # fmt: skip
        return None
    if name == event:
        return data
    if data.get("decision") == "block":  # the block holds: a hook that meant to stop something is not overruled
        out.warnings.append(f"{event} hook `{run.hook.command}` blocked; its hookSpecificOutput, naming {name}, was "
                            "ignored")  # fmt: skip
        return {k: v for k, v in data.items() if k != "hookSpecificOutput"}
    wrong = f"Hook returned incorrect event name: expected '{event}' but got '{name}'. Full stdout: " + json.dumps(
        data, indent=2, ensure_ascii=False
    )
    if run.hook.callback is not None:
        out.failed = wrong
    else:
        out.warnings.append(wrong)
    return None


def _json_object(text: str) -> dict[str, Any] | None:
    return json_object(text) if text.startswith("{") else None


def _apply(event: str, data: dict[str, Any], out: Outcome) -> None:
    """A hook's JSON output: the common fields, `decision`/`reason`, and `hookSpecificOutput`."""
    if data.get("continue") is False:
        out.stop, out.stop_reason = True, _join(out.stop_reason, str(data.get("stopReason") or ""))
    if isinstance(data.get("systemMessage"), str):
        out.messages.append(data["systemMessage"])
    decision, reason = data.get("decision"), str(data.get("reason") or "")
    if decision == "block":
        out.blocked, out.reason = True, _join(out.reason, reason or f"blocked by a {event} hook")
        out.said.append(reason or f"blocked by a {event} hook")
    elif decision == "approve" and event == "PreToolUse":  # the older PreToolUse spelling of allow
        _permission(out, "allow", reason)
    specific = data.get("hookSpecificOutput")
    if not isinstance(specific, dict):  # `_named` let through only this event's
        return
    if isinstance(specific.get("additionalContext"), str) and specific["additionalContext"].strip():
        out.context.append(specific["additionalContext"].strip())
    if event == "PreToolUse":
        wanted = specific.get("permissionDecision")
        if wanted in _PERMISSION_RANK:
            _permission(out, wanted, str(specific.get("permissionDecisionReason") or ""))
        if isinstance(specific.get("updatedInput"), dict):
            out.updated_input = dict(specific["updatedInput"])  # replaces the input, as in Claude Code


def _permission(out: Outcome, wanted: Permission, reason: str) -> None:
    if out.permission is None or _PERMISSION_RANK[wanted] > _PERMISSION_RANK[out.permission]:
        out.permission, out.permission_reason = wanted, reason
    elif wanted == out.permission:
        out.permission_reason = _join(out.permission_reason, reason)


def _join(a: str, b: str) -> str:
    return f"{a}\n{b}" if a and b else a or b
