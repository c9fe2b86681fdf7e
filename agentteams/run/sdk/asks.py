"""What the agent asks an SDK program: `can_use_tool` for a permission question (`--permission-prompt-tool stdio`),
its answer applied (allow with `updatedInput` and `updatedPermissions`, deny with a message, deny that ends the turn),
and `hook_callback` for each hook the program registered in its `initialize`. No answer is never an allow."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from agentteams import diagnostics
from agentteams.agent.hooks.spec import DEFAULT_TIMEOUT, HookCommand
from agentteams.agent.permissions.path_rules import absolute
from agentteams.agent.turn_types import Answer, PermissionAsk
from agentteams.errors import AgentTeamsError
from agentteams.run.sdk.channel import ControlChannel
from agentteams.store.protocol import PermissionRequest
from agentteams.tools.runtime_hooks import MODE_ALIASES

EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


class ToolAsks:
    """`ask` for the agent loop: each question goes to the program as `can_use_tool`; the session's policy takes the
    permission updates the program sends with an allow."""

    def __init__(self, channel: ControlChannel, session: Any = None, *, may_bypass: bool = False) -> None:
        self.channel, self.may_bypass = channel, may_bypass
        self.session: Any = session  # set once the lead is built: questions come only in its turns

    def __call__(self, ask: PermissionAsk) -> Answer:
        request: dict[str, Any] = {"tool_name": ask.tool, "display_name": ask.tool, "input": ask.input,
                                   "permission_suggestions": suggestions(ask, self.session.options.cwd),
                                   "tool_use_id": ask.tool_use_id}  # fmt: skip
        described = ask.input.get("description") if ask.tool == "Bash" else ask.target
        if isinstance(described, str) and described:
            request["description"] = described
        if ask.reason:
            request["decision_reason"] = ask.reason
        if ask.target and ask.tool in (*EDIT_TOOLS, "Read"):
            request["blocked_path"] = absolute(ask.target, self.session.options.cwd)
        elif ask.tool == "Bash" and ask.target and (written := bash_edits(ask.target, self.session.options.cwd)):
            request["blocked_path"] = written[0]
        try:
            answer = self.channel.request("can_use_tool", request)
        except AgentTeamsError as e:
            diagnostics.warning("%s: %s; the call is denied", ask.tool, e)
            ask.feedback = "the permission prompt did not answer"
            return "deny"
        if answer.get("behavior") == "allow":
            updated = answer.get("updatedInput")
            if isinstance(updated, dict):
                ask.updated_input = updated
            self._apply(answer.get("updatedPermissions"))
            return "allow"
        message = answer.get("message")
        ask.feedback = message if isinstance(message, str) else ""
        ask.stop_turn = answer.get("interrupt") is True
        return "deny"

    def judge(self, msg: PermissionRequest, who: str) -> Literal["allow", "deny"]:
        """A teammate's permission request, put to the program as `can_use_tool` with the teammate's `agent_id` (what
        Claude Code sends for a subagent's call); no answer is a deny."""
        request: dict[str, Any] = {"tool_name": msg.tool_name, "display_name": msg.tool_name, "input": msg.input,
                                   "tool_use_id": msg.tool_use_id, "agent_id": msg.agent_id or who,
                                   "permission_suggestions": msg.permission_suggestions or []}  # fmt: skip
        if msg.description:
            request["description"] = msg.description
        try:
            answer = self.channel.request("can_use_tool", request)
        except AgentTeamsError as e:
            diagnostics.warning("%s's %s: %s; the call is denied", who, msg.tool_name, e)
            return "deny"
        return "allow" if answer.get("behavior") == "allow" else "deny"

    def _apply(self, updates: object) -> None:
        """The permission updates sent with an allow, for the rest of this session (a rule, a mode, a directory);
        one it cannot read is a warning and nothing more."""
        from agentteams.agent.permissions import live_changes
        from agentteams.agent.permissions.policy import parse_mode
        from agentteams.settings import edit

        policy = self.session.policy
        for update in updates if isinstance(updates, list) else []:
            kind = update.get("type") if isinstance(update, dict) else None
            try:
                if kind in ("addRules", "replaceRules") and update.get("behavior") in ("allow", "ask", "deny"):
                    texts = [r["toolName"] + (f"({r['ruleContent']})" if r.get("ruleContent") else "")
                             for r in update.get("rules") or []]  # fmt: skip
                    for text in texts:
                        live_changes.add_rules(policy, update["behavior"], text)
                    if update.get("destination") in edit.SCOPE_OF:  # kept for later sessions too, as claude keeps it
                        edit.add_rules(self.session.options.cwd, update["destination"], update["behavior"], texts)
                elif kind == "setMode":
                    mode = MODE_ALIASES.get(str(update.get("mode")), str(update.get("mode")))
                    if mode == "bypassPermissions" and not self.may_bypass:  # as set_permission_mode refuses it
                        raise AgentTeamsError("bypassPermissions needs a session started with it or with "
                                              "--allow-dangerously-skip-permissions")  # fmt: skip
                    policy.mode = parse_mode(mode)
                elif kind == "addDirectories":
                    policy.additional_dirs += [Path(str(d)) for d in update.get("directories") or []]
                else:
                    diagnostics.warning("a permission update of type %r is not applied", kind)
            except (AgentTeamsError, KeyError, TypeError) as e:
                diagnostics.warning("a permission update was not applied: %s", e)


def bash_edits(command: str, cwd: Any) -> list[str]:
    """The files a command writes when it is one acceptEdits would run unasked (file commands and redirections inside
    the working directory), else none: what Claude Code offers that mode for, and names as the blocked path."""
    from agentteams.agent.permissions.bash_judge import Places, accepts_edits, line_of, paths_touched

    places = Places(str(cwd), (os.path.realpath(cwd),), os.path.expanduser("~"), readable=lambda _path: True)
    line = line_of(command, str(cwd))
    if not accepts_edits(line, places):
        return []
    return [path for how, _command, path in paths_touched(line, places) if how == "edit"]


def suggestions(ask: PermissionAsk, cwd: Any) -> list[dict[str, Any]]:
    """What the program may offer to allow from now on, as Claude Code suggests it: the command for Bash, a path's
    directory for a file outside the project, accept-edits for an edit."""
    out: list[dict[str, Any]] = []
    if ask.tool == "Bash" and ask.target:
        out.append({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": ask.target}],
                    "behavior": "allow", "destination": "localSettings"})  # fmt: skip
        written = bash_edits(ask.target, cwd)
        if written:  # a command acceptEdits would run: that mode, and the written file's directory, are offered
            out.append(
                {"type": "addDirectories", "directories": [os.path.dirname(written[0])], "destination": "session"}
            )
            out.append({"type": "setMode", "mode": "acceptEdits", "destination": "session"})
    if ask.tool in EDIT_TOOLS:
        out.append({"type": "setMode", "mode": "acceptEdits", "destination": "session"})
    if ask.tool != "Bash" and ask.target:
        path = absolute(ask.target, cwd)
        if not path.startswith(str(cwd).rstrip("/") + "/"):
            out.append({"type": "addDirectories", "directories": [os.path.dirname(path)], "destination": "session"})
    return out


def sdk_hooks(channel: ControlChannel, config: object) -> list[HookCommand]:
    """The hooks an `initialize` registers (`{event: [{matcher, hookCallbackIds, timeout}]}`), each a callback that
    sends `hook_callback` and takes the program's answer as the hook's JSON output."""
    out: list[HookCommand] = []
    for event, matchers in config.items() if isinstance(config, dict) else ():
        for group in matchers if isinstance(matchers, list) else ():
            if not isinstance(group, dict):
                continue
            timeout = group.get("timeout")
            seconds = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else DEFAULT_TIMEOUT
            closed = group.get("onFailure", "continue") != "continue"  # an unknown value blocks, as in claude
            for callback_id in group.get("hookCallbackIds") or []:
                call = _hook_call(channel, str(callback_id))
                out.append(HookCommand(str(event), str(group.get("matcher") or ""), f"sdk:{callback_id}", seconds,
                                       "the SDK program", callback=call, fail_closed=closed))  # fmt: skip
    return out


def _hook_call(channel: ControlChannel, callback_id: str) -> Any:
    def call(payload: dict[str, Any], timeout: float) -> dict[str, Any]:
        body = {"callback_id": callback_id, "input": payload, "tool_use_id": payload.get("tool_use_id")}
        return channel.request("hook_callback", body, timeout)

    return call
