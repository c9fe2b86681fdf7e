"""Hooks without the CLI: matchers, the config's shape, what exit codes and JSON output mean, the `/hooks` lines,
and one real hook process (environment without credentials, killed at its timeout)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from agentteams.agent.hooks.points import HookPoints
from agentteams.agent.hooks.runner import HookRunner, run_command
from agentteams.agent.hooks.spec import (
    DEFAULT_TIMEOUT,
    HookCommand,
    HookRun,
    Outcome,
    configured,
    describe,
    interpret,
    matches,
)
from agentteams.agent.hooks.spec import selected as select_hooks
from agentteams.agent.loop import Agent, AgentSettings, PermissionAsk
from agentteams.settings.load import typed
from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.tools.base import ToolContext
from tests.support.fake_model import FakeModel, text, tool
from tests.support.fault_ledger import FaultLedger
from tests.support.hooks import settings_with
from tests.support.loop_parts import Echo, Policy, results_of
from tests.support.procs import pid_alive
from tests.support.wait import wait_until


@pytest.mark.parametrize(
    ("matcher", "value", "hit"),
    [
        ("", "Bash", True), ("*", "Edit", True), ("Bash", "Bash", True), ("Bash", "BashOutput", False),
        ("Edit|Write", "Write", True), ("Edit|Write", "Read", False), ("mcp__.*", "mcp__db__query", True),
        ("Notebook.*", "NotebookEdit", True), ("Notebook.*", "Read", False), ("startup", "resume", False),
        ("(", "Bash", False),  # not a pattern: matches nothing
    ],
)  # fmt: skip
def test_matchers(matcher: str, value: str, hit: bool) -> None:
    assert matches(matcher, value) is hit


def test_config_shape_problems_and_describe() -> None:
    s = settings_with({
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a.sh", "timeout": 5}]},
                       {"hooks": [{"type": "prompt", "prompt": "x"}, {"type": "command", "command": "b.sh"}]}],
        "Stop": [{"hooks": "nope"}],
        "TeammateIdle": [{"hooks": [{"type": "command", "command": "c.sh", "timeout": -1}]}],
    })  # fmt: skip
    hooks, problems = configured(s)
    assert [(h.event, h.matcher, h.command, h.timeout) for h in hooks] == [
        ("PreToolUse", "Bash", "a.sh", 5.0), ("PreToolUse", "", "b.sh", DEFAULT_TIMEOUT),
        ("TeammateIdle", "", "c.sh", DEFAULT_TIMEOUT),
    ]  # fmt: skip
    assert len(problems) == 3 and "hooks.Stop[0]" in problems[1] and "timeout" in problems[2]
    lines = describe(s)
    assert lines[0] == "PreToolUse  matcher=Bash  a.sh  (timeout 5s, /p/.claude/settings.json)"
    assert lines[1].startswith("PreToolUse  matcher=*  b.sh") and lines[-1].startswith("skipped: ")
    [never] = describe(settings_with({"PostCompact": [{"hooks": [{"type": "command", "command": "x"}]}]}))
    assert never.endswith("[never fired by agentteams]")  # a newer event agentteams does not fire
    [fired] = describe(settings_with({"PreCompact": [{"hooks": [{"type": "command", "command": "x"}]}]}))
    assert "never fired" not in fired


def test_selection_dedups_and_ignores_matchers_of_untooled_events() -> None:
    hooks = [
        HookCommand("PreToolUse", "Bash", "x"), HookCommand("PreToolUse", "*", "x"),
        HookCommand("PreToolUse", "Edit", "y"), HookCommand("TeammateIdle", "whatever", "z"),
    ]  # fmt: skip
    assert [h.command for h in select_hooks(hooks, "PreToolUse", "Bash")] == ["x"]
    assert [h.command for h in select_hooks(hooks, "TeammateIdle", None)] == ["z"]


def run(code: int | None, out: str = "", err: str = "", *, timed_out: bool = False) -> HookRun:
    return HookRun(HookCommand("E", "", "cmd", 3), code, out, err, timed_out)


def test_exit_codes() -> None:
    blocked = interpret("PreToolUse", [run(2, err="no rm here\n"), run(0)])
    assert blocked.blocked and blocked.reason == "[cmd]: no rm here" and not blocked.warnings
    warned = interpret("PreToolUse", [run(1, err="boom\nlast line")])
    assert not warned.blocked and warned.warnings == ["PreToolUse hook `cmd` exited 1: last line"]
    assert interpret("X", [run(None, timed_out=True)]).warnings == ["X hook `cmd` timed out after 3s; killed"]
    assert interpret("UserPromptSubmit", [run(0, out="ctx line\n")]).context == ["ctx line"]
    assert interpret("PostToolUse", [run(0, out="plain\n")]).context == []  # plain stdout: only prompt/start events


def test_json_output() -> None:
    def hook_json(event: str, *objs: object) -> Outcome:
        return interpret(event, [run(0, out=json.dumps(o)) for o in objs])

    pre = hook_json(
        "PreToolUse",
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}},
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                "permissionDecisionReason": "nope", "updatedInput": {"command": "ls"}}},
    )  # fmt: skip
    assert (pre.permission, pre.permission_reason, pre.updated_input) == ("deny", "nope", {"command": "ls"})
    specific = {"hookEventName": "PostToolUse", "additionalContext": "c"}
    post = hook_json("PostToolUse", {"decision": "block", "reason": "lint failed", "hookSpecificOutput": specific})
    assert (post.blocked, post.reason, post.context) == (True, "lint failed", ["c"])
    stop = hook_json("Stop", {"continue": False, "stopReason": "enough", "systemMessage": "hi"})
    assert (stop.stop, stop.stop_reason, stop.messages) == (True, "enough", ["hi"])
    other = hook_json("PreToolUse", {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "x"}})
    assert other.context == []  # another event's output is not ours


def test_a_hook_runs_without_credentials_and_dies_at_its_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-unit-secret-000")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-unit-secret-000")
    out = tmp_path / "env.json"
    script = tmp_path / "dump_env.py"
    script.write_text(
        f"import json, os, sys\nseen = {{'env': dict(os.environ), 'stdin': sys.stdin.read()}}\n"
        f"json.dump(seen, open({str(out)!r}, 'w'))\n"
    )
    command = f"{sys.executable} {script}"
    s = settings_with({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]})
    runner = HookRunner(
        s, cwd=tmp_path, session_id="s1", transcript_path="/t/s1.jsonl", permission_mode=lambda: "default",
        secrets=("sk-unit-secret-000",),
    )  # fmt: skip
    runner.fire("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "echo sk-unit-secret-000"}}, "Bash")
    seen = json.loads(out.read_text())
    assert "ANTHROPIC_API_KEY" not in seen["env"] and "ANTHROPIC_AUTH_TOKEN" not in seen["env"]
    assert seen["env"]["CLAUDE_PROJECT_DIR"] == str(tmp_path)
    assert (
        "sk-unit-secret-000" not in seen["stdin"] and json.loads(seen["stdin"])["tool_input"]["command"] == "echo ***"
    )

    pid_file = tmp_path / "sleeper.pid"
    hang = HookCommand("PreToolUse", "", f"sleep 30 & echo $! > {pid_file}; wait", timeout=0.5)
    start = time.monotonic()
    result = run_command(hang, "{}", tmp_path, dict(os.environ))
    assert result.timed_out and time.monotonic() - start < 5
    sleeper = int(pid_file.read_text())
    wait_until(lambda: not pid_alive(sleeper), 5, "the hook's child to be killed with its process group")


def loop_agent(tmp_path: Path, hooks: dict[str, object], model: FakeModel, kind: str | None = None) -> Agent:
    runner = HookRunner(
        settings_with(hooks), cwd=tmp_path, session_id="s1", transcript_path="/t/s1.jsonl",
        permission_mode=lambda: "default",
    )  # fmt: skip
    points = HookPoints(runner) if kind is None else HookPoints(runner).for_subagent("sub-1", kind)
    ctx = ToolContext(cwd=tmp_path, store=FileStore(Layout(tmp_path / "cfg")), session_id="s1")
    return Agent(model, [Echo()], ctx, Policy(), AgentSettings("m", "sys"), hooks=points)


def command(text: str) -> dict[str, object]:
    return {"hooks": [{"type": "command", "command": text}]}


def test_a_hook_ask_asks_and_notification_hears_of_it(tmp_path: Path) -> None:
    ask_json = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}})
    log = tmp_path / "notification.log"
    agent = loop_agent(tmp_path, {
        "PreToolUse": [{"matcher": "Echo", **command(f"echo '{ask_json}'")}],
        "Notification": [{"matcher": "permission_prompt", **command(f"cat >> {log}; echo >> {log}")}],
    }, FakeModel([[tool("Echo", text="x")], [text("k")]]))  # fmt: skip
    asked: list[PermissionAsk] = []
    agent.ask = lambda q: asked.append(q) or "allow"  # type: ignore[func-returns-value]
    agent.run("go")
    assert len(asked) == 1 and "PreToolUse hook" in asked[0].reason  # the policy alone allows Echo
    [payload] = [json.loads(line) for line in log.read_text().splitlines()]
    assert payload["message"] == "Claude needs your permission to use Echo"
    assert (payload["hook_event_name"], payload["notification_type"]) == ("Notification", "permission_prompt")


def test_subagent_stop_matches_the_agent_type_and_can_keep_it_going(tmp_path: Path) -> None:
    mark, log = tmp_path / "mark", tmp_path / "stop.log"
    once = f"cat >> {log}; echo >> {log}; [ -e {mark} ] || {{ touch {mark}; echo 'dig deeper' >&2; exit 2; }}"
    agent = loop_agent(tmp_path, {
        "SubagentStop": [{"matcher": "Explore", **command(once)}, {"matcher": "Plan", **command("exit 2")}],
        "Stop": [command("exit 2")],  # the main agent's event: not a subagent's
    }, FakeModel([[text("first")], [text("second")]]), kind="Explore")  # fmt: skip
    result = agent.run("go")
    assert result.text == "second" and result.model_calls == 2
    [feedback] = agent.messages[2]["content"]
    assert feedback["text"].startswith("Stop hook feedback:\n[cat >> ") and feedback["text"].endswith("]: dig deeper")
    payloads = [json.loads(line) for line in log.read_text().splitlines()]
    assert [p["stop_hook_active"] for p in payloads] == [False, True]
    assert (payloads[0]["agent_id"], payloads[0]["agent_type"]) == ("sub-1", "Explore")


def test_updated_input_runs_and_continue_false_ends_the_turn(tmp_path: Path) -> None:
    rewrite = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"text": "rewritten"}}})
    halt = json.dumps({"continue": False, "stopReason": "enough for today"})
    model = FakeModel([[tool("Echo", text="original")], [text("never asked for")]])
    agent = loop_agent(tmp_path, {
        "PreToolUse": [{"matcher": "Echo", **command(f"echo '{rewrite}'")}],
        "PostToolUse": [{"matcher": "Echo", **command(f"echo '{halt}'")}],
    }, model)  # fmt: skip
    result = agent.run("go")
    [res] = results_of(agent, 2)
    assert res["content"] == "echo: rewritten"  # the tool ran with the hook's input
    assert result.model_calls == 1 and len(model.requests) == 1  # `continue: false`: no further model call


def test_no_runner_without_hooks_or_when_all_are_disabled(tmp_path: Path) -> None:
    hooks = {"Stop": [command("exit 2")]}

    def build(merged: dict[str, object]) -> HookPoints:
        return HookPoints.build(typed(merged, {}), cwd=tmp_path, session_id="s", transcript_path="t",
                                permission_mode=lambda: "default")  # fmt: skip

    assert build({"hooks": hooks}).runner is not None
    assert build({}).runner is None and build({"hooks": hooks, "disableAllHooks": True}).runner is None
    assert build({}).submitted("hi") == ("hi", None) and build({}).teammate_idle("a", "t") == (None, False)


def test_an_events_hooks_run_side_by_side(tmp_path: Path) -> None:
    """Each waits for the other's mark: they both pass only if they run at once."""

    def meet(mine: str, theirs: str) -> dict[str, object]:
        wait = f"for i in $(seq 100); do [ -e {theirs} ] && exit 0; sleep 0.05; done; exit 1"
        return command(f"touch {mine}; {wait}")

    warnings: list[str] = []
    runner = HookRunner(
        settings_with({"Stop": [meet("a", "b"), meet("b", "a")]}), cwd=tmp_path, session_id="s",
        transcript_path="t", permission_mode=lambda: "default", warn=warnings.append,
    )  # fmt: skip
    outcome = runner.fire("Stop", {})
    assert not outcome.blocked and warnings == []


def test_clear_ends_the_old_session_and_starts_the_new_one(tmp_path: Path) -> None:
    """/clear as Claude Code: SessionEnd (reason clear) with the old ids, SessionStart (source clear) with the new
    ones, whose stdout is context for the next request."""
    from agentteams.agent.session import Session, SessionOptions

    log = tmp_path / "sessions.log"
    record = f"cat >> {log}; echo >> {log}"
    hooks: dict[str, object] = {
        "SessionStart": [command(f"{record}; echo START-CONTEXT")],
        "SessionEnd": [command(record)],
    }
    model = FakeModel([[text("one")], [text("two")]])
    options = SessionOptions(cwd=tmp_path, settings=settings_with(hooks))
    session = Session(options, model, layout=Layout(tmp_path / "cfg"))
    session.run("before")
    old_id, old_transcript = options.session_id, str(session.transcript.path)
    new_id = session.clear()
    session.run("after")
    start, end, again = [json.loads(line) for line in log.read_text().splitlines()]
    assert (start["source"], start["session_id"]) == ("startup", old_id)
    assert (end["hook_event_name"], end["reason"], end["session_id"]) == ("SessionEnd", "clear", old_id)
    assert end["transcript_path"] == old_transcript
    assert (again["source"], again["session_id"], again["transcript_path"]) == (
        "clear",
        new_id,
        str(session.transcript.path),
    )
    assert "START-CONTEXT" in json.dumps(model.requests[-1].messages) and "before" not in json.dumps(
        model.requests[-1].messages
    )


def test_a_hook_is_done_when_it_exits_though_a_child_it_left_holds_its_output(
    tmp_path: Path, ledger: FaultLedger
) -> None:
    """`sleep 60 &` in a hook: its answer counts once the hook itself exits, not when the child lets go of the pipes
    (the tool call waited ~60 s). The child is left running: a hook may start a daemon on purpose."""
    pid_file = tmp_path / "child.pid"
    hook = HookCommand("PreToolUse", "", f"sleep 60 & echo $! > {pid_file}; echo done", timeout=30)
    ledger.faults = 1
    started = time.monotonic()
    result = run_command(hook, "{}", tmp_path, dict(os.environ))
    ledger.hangs += time.monotonic() - started > 20  # the child's 60 s, or the hook's 30 s timeout
    child = int(pid_file.read_text())
    try:
        assert (result.code, result.stdout.strip(), result.timed_out) == (0, "done", False)
        assert pid_alive(child), "the child a hook started on purpose was killed"
    finally:
        os.kill(child, 9)


def test_a_hooks_output_reaches_the_session_cut_to_its_head_and_tail(tmp_path: Path) -> None:
    hook = HookCommand("PostToolUse", "", "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo LAST-LINE", timeout=30)
    result = run_command(hook, "{}", tmp_path, dict(os.environ))
    assert result.code == 0 and result.stdout.startswith("xxx") and result.stdout.rstrip().endswith("LAST-LINE")
    assert len(result.stdout) < 120_000 and "characters of output cut" in result.stdout
