"""Interop tier, headless flags: the real Claude Code CLI and ours fed the same stream-json input, as the Agent SDK's
transport feeds it, print the same shape of output (event types in order, and their keys) and hook lines; the
request-shaping and prompt-file flags reach the model alike; both refuse misused flags, each in one line, exit 1."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import serve
from tests.support.script_runs import SIDE, WHICH, Run, both, both_refuse, command, model_requests, real_config
from tests.support.stream_json import STREAM_ARGS, handshake, read_turn, sdk_user_line

pytestmark = pytest.mark.timeout(120)

# keys every event of each kind carries in both CLIs: what an SDK reads
CORE = {
    "system": {"type", "subtype", "session_id", "model", "cwd", "tools", "permissionMode", "uuid"},
    "assistant": {"type", "message", "parent_tool_use_id", "session_id", "uuid"},
    "user": {"type", "message", "parent_tool_use_id", "session_id", "uuid", "tool_use_result"},
    "result": {"type", "subtype", "is_error", "result", "session_id", "num_turns", "duration_ms", "total_cost_usd",
               "usage", "stop_reason", "permission_denials", "uuid"},
}  # fmt: skip
# our result names the model it used (beside the per-model usage map); our init lists the --add-dir directories,
# as 2.1.330's does and 2.1.197's does not, and says our own version beside the Claude Code one it matches
OURS_ONLY = {"model", "additional_directories", "agentteams_version"}
# what 2.1.330 added to its message events, and ours carry: 2.1.197 lacks them
SINCE_330 = {"assistant": {"timestamp", "request_id"}, "user": {"timestamp"},
             "result": {"fast_mode_disabled_reason", "queued_turn_count", "result_index", "safety_stops",
                        "subagent_stats"}}  # fmt: skip
# ours sends the newest CLI's init keys (held to them in that version's own run of this test): an older one lacks some
NEWEST_INIT = {"system"}


def script() -> dict[str, Any]:
    answers: list[dict[str, Any]] = [
        {"content": [{"type": "text", "text": t}]} for t in ("FIRST-ANSWER", "SECOND-ANSWER")
    ]
    bash = {"content": [{"type": "text", "text": "Running."}, {"type": "tool_use", "name": "Bash",
                                                                "input": {"command": "echo TOOL-RAN"}}]}  # fmt: skip
    answers.insert(1, bash)  # the second turn: an answer of two blocks, a tool result, then the answer
    other = {"content": [{"type": "text", "text": "x"}], "repeat": 50}  # the real CLI's side requests
    return {"routes": [{"name": "main", "match": {"tools": True}, "turns": answers},
                       {"name": "other", "turns": [other]}]}  # fmt: skip


def blocks(event: dict[str, Any]) -> list[dict[str, Any]]:
    """An event's content blocks without what differs by nature (ids) or by habit (`is_error: false`)."""
    drop = {"id", "tool_use_id"}
    return [{k: v for k, v in b.items() if k not in drop and (k, v) != ("is_error", False)}
            for b in event["message"]["content"]]  # fmt: skip


def converse(argv: list[str], env: dict[str, str], cwd: Path) -> list[list[dict[str, Any]]]:
    """Two turns over one process, each message written after the previous answer's result: the turns' events."""
    proc = subprocess.Popen(argv, env=env, cwd=cwd, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        handshake(proc.stdin, proc.stdout)  # both answer the SDK's initialize, and refuse an unknown request
        turns = []
        for text in ("first question", "second question"):
            proc.stdin.write(sdk_user_line(text))
            proc.stdin.flush()
            turns.append(read_turn(proc.stdout))
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    return turns


def test_stream_json_conversation_has_the_real_clis_shape(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path, proj: Path, servers: list[MockServer]
) -> None:
    config = real_config(tmp_path, proj)
    real, ours = [
        converse(*command(which, claude, cli, config, STREAM_ARGS, serve(servers, script()).base_url), proj)
        for which in WHICH
    ]
    shapes = (["system", "assistant", "result"], ["system", "assistant", "assistant", "user", "assistant", "result"])
    for real_turn, our_turn, answer, shape in zip(real, ours, ("FIRST-ANSWER", "SECOND-ANSWER"), shapes, strict=True):
        assert [e["type"] for e in real_turn] == [e["type"] for e in our_turn] == shape
        for theirs, mine in zip(real_turn, our_turn, strict=True):
            kind = mine["type"]
            newer = SINCE_330.get(kind, set())
            assert CORE[kind] <= set(theirs) and CORE[kind] | newer <= set(mine), kind
            allowed = OURS_ONLY | (newer if claude_version == "2.1.197" else set())
            if claude_version != rc.NEWEST and kind in NEWEST_INIT:
                allowed |= set(mine)  # the keys are the newest's; their values are checked below as for any version
            assert set(mine) - set(theirs) <= allowed, kind
            assert theirs.get("subtype") == mine.get("subtype")
        assert real_turn[-1]["result"] == our_turn[-1]["result"] == answer
        for theirs, mine in zip(real_turn[1:-1], our_turn[1:-1], strict=True):  # block by block, result by result
            assert blocks(mine) == blocks(theirs)
        user = [e for e in our_turn if e["type"] == "user"]
        assert all(e["tool_use_result"] is not None for e in user)
    for turns in (real, ours):  # one conversation: one session id throughout
        assert len({e["session_id"] for turn in turns for e in turn}) == 1


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("-p", "hi", "--session-id", "nope"), None),
        (("-p", ""), ""),
        (("-p", "   "), ""),
        (("-p",), ""),
        (("-p", "hi", "--output-format", "stream-json"), None),
    ],
)
def test_both_refuse_the_same_misuse_in_one_line(
    claude: Path, cli: Cli, tmp_path: Path, proj: Path, args: tuple[str, ...], stdin: str | None
) -> None:
    for which, proc in both_refuse(claude, cli, tmp_path, proj, *args, stdin=stdin or ""):
        assert len(proc.stderr.strip().splitlines()) == 1, (which, proc.stderr)


def test_both_fall_back_once_after_the_retries_on_overload(
    claude: Path, cli: Cli, tmp_path: Path, proj: Path, servers: list[MockServer]
) -> None:
    from tests.support.headless import overloaded

    args = ("-p", "hi", "--model", "sonnet", "--fallback-model", "opus")
    spec = overloaded(3)
    spec["routes"].append(SIDE)
    retries = {"CLAUDE_CODE_MAX_RETRIES": "2"}
    for name, proc, server in both(claude, cli, tmp_path, proj, servers, spec, *args, extra=retries):
        assert (proc.returncode, proc.stdout.strip()) == (0, "FELL"), (name, proc.stderr)
        models = [r["body"]["model"] for r in model_requests(server)]
        assert len(models) == 4 and len(set(models[:3])) == 1, (name, models)  # 1 try + 2 retries, then once more
        assert "sonnet" in models[0] and "opus" in models[3], (name, models)


def test_system_prompt_and_its_append_reach_the_model_as_the_real_cli_sends_them(
    claude: Path, cli: Cli, tmp_path: Path, proj: Path, servers: list[MockServer]
) -> None:
    args = ("-p", "hi", "--system-prompt", "SYS-REPLACED", "--append-system-prompt", "SYS-APPENDED")
    systems = [system_sent(run) for run in both(claude, cli, tmp_path, proj, servers, script(), *args)]
    assert systems[0] == systems[1] == "SYS-REPLACED\n\nSYS-APPENDED"


# what the request shaping flags control, each compared with 2.1.332's request (its defaults per model included)
FLAG_BETAS = {"effort-2025-11-24", "task-budgets-2026-03-13", "context-1m-2025-08-07", "foo-1",
              "interleaved-thinking-2025-05-14", "context-management-2025-06-27"}  # fmt: skip
SHAPED = [
    (("--model", "claude-opus-5-5", "--effort", "high", "--task-budget", "20000"), ("output_config", "betas")),
    (("--model", "claude-opus-5-5", "--thinking", "adaptive", "--thinking-display", "summarized"),
     ("thinking", "max_tokens")),
    (("--model", "claude-opus-5-5", "--thinking", "disabled", "--max-thinking-tokens", "5000"), ("budget_or_off",)),
    (("--model", "claude-sonnet-4-5", "--max-thinking-tokens", "5000", "--thinking-display", "summarized", "--effort",
      "high"), ("thinking", "max_tokens", "output_config", "betas")),
    (("--model", "claude-haiku-4-5", "--thinking", "disabled"), ("thinking", "context_management", "betas")),
    (("--model", "claude-sonnet-4-5", "--betas", "context-1m-2025-08-07"), ("betas",)),
    (("--model", "claude-sonnet-4-5", "--betas", "foo-1"), ("betas", "warned")),
    *[(("--model", model), ("thinking", "max_tokens", "output_config", "context_management", "betas"))  # nothing asked
      for model in ("claude-opus-5-5", "claude-opus-4-7", "claude-sonnet-4-6", "claude-opus-4-5-20251101",
                    "claude-sonnet-4-5-20250929", "claude-3-5-haiku-20241022", "claude-custom-thing")],
]  # fmt: skip


def shaped(request: dict[str, Any], stderr: str) -> dict[str, Any]:
    body = request["body"]
    thinking = body.get("thinking") or {}
    header = request["headers"].get("anthropic-beta", "")
    return {
        "thinking": thinking, "max_tokens": body["max_tokens"], "output_config": body.get("output_config"),
        "context_management": body.get("context_management"),
        "betas": sorted(set(header.split(",")) & FLAG_BETAS),
        "budget_or_off": thinking.get("type") in ("enabled", "disabled"),
        "warned": "Beta header 'foo-1' is not allowed. Only the following betas are supported: "
                  "context-1m-2025-08-07" in stderr,
    }  # fmt: skip


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize(("args", "keys"), SHAPED)
def test_the_request_shaping_flags_shape_ours_as_the_real_cli_shapes_its(
    claude: Path,
    cli: Cli,
    tmp_path: Path,
    proj: Path,
    servers: list[MockServer],
    args: tuple[str, ...],
    keys: tuple[str, ...],
) -> None:
    views = []
    for which, proc, server in both(claude, cli, tmp_path, proj, servers, script(), "-p", "hi", *args):
        assert proc.returncode == 0, (which, proc.stderr)
        [request] = model_requests(server)
        view = shaped(request, proc.stderr)
        views.append({k: view[k] for k in keys})
    assert views[0] == views[1]


@ccv.only(rc.NEWEST)
def test_prompt_files_reach_the_model_as_the_real_cli_joins_them(
    claude: Path, cli: Cli, tmp_path: Path, proj: Path, servers: list[MockServer]
) -> None:
    (proj / "sys.txt").write_text("FILE-SYS\n")
    (proj / "app.txt").write_text("FILE-APP\n")
    args = ("-p", "hi", "--system-prompt-file", "sys.txt", "--append-system-prompt-file", "app.txt",
            "--append-system-prompt", "X")  # fmt: skip
    systems = [system_sent(run) for run in both(claude, cli, tmp_path, proj, servers, script(), *args)]
    assert systems[0] == systems[1] == "FILE-SYS\n\n\nFILE-APP\n\nX"


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize(
    "args",
    [("--system-prompt-file", "nope.txt"), ("--append-system-prompt-file", "nope.txt"), ("--task-budget", "0"),
     ("--thinking", "foo"), ("--thinking-display", "foo"), ("--max-thinking-tokens", "abc")],
)  # fmt: skip
def test_both_refuse_a_bad_prompt_file_or_value_in_one_line(
    claude: Path, cli: Cli, tmp_path: Path, proj: Path, args: tuple[str, ...]
) -> None:
    said = []
    for _, proc in both_refuse(claude, cli, tmp_path, proj, "-p", "hi", *args):
        [line] = proc.stderr.strip().splitlines()
        said.append(line.split("rror: ", 1)[1])  # after claude's `Error: ` / `error: `, our `agentteams: error: `
    assert said[0] == said[1]


HOOK_FIELDS = ("type", "subtype", "hook_name", "hook_event", "output", "stdout", "stderr", "exit_code", "outcome")


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("flag", [(), ("--include-hook-events",)])
def test_hook_runs_are_the_same_lines_as_the_real_clis(
    claude: Path, cli: Cli, tmp_path: Path, proj: Path, servers: list[MockServer], flag: tuple[str, ...]
) -> None:
    import json

    (proj / ".claude").mkdir()
    hook = [{"matcher": "", "hooks": [{"type": "command", "command": "echo OUT; echo ERR >&2"}]}]
    events = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
    (proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": dict.fromkeys(events, hook)}))
    bash = {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo RAN"}}]}
    spec = script()
    spec["routes"][0]["turns"] = [bash, {"content": [{"type": "text", "text": "DONE"}]}]
    args = (*STREAM_ARGS, "--dangerously-skip-permissions", *flag)
    seen = []
    for which, proc, _ in both(claude, cli, tmp_path, proj, servers, spec, *args, stdin=sdk_user_line("hi")):
        assert proc.returncode == 0, (which, proc.stderr)
        lines = [json.loads(line) for line in proc.stdout.splitlines()]
        hooks = [e for e in lines if str(e.get("subtype", "")).startswith("hook_")]
        assert all(set(e) - set(HOOK_FIELDS) == {"hook_id", "uuid", "session_id"} for e in hooks)
        # `output` is stdout and stderr as they came: the order of two writes of one hook is the machine's
        seen.append([{k: sorted(e[k].splitlines()) if k == "output" else e[k] for k in HOOK_FIELDS if k in e}
                     for e in hooks])  # fmt: skip
    assert seen[0] == seen[1] and len(seen[0]) == (10 if flag else 2)


def system_sent(run: Run) -> str:
    """The system prompt's text a run's model request carried (the last block of a list: the real CLI's own)."""
    which, proc, server = run
    assert proc.returncode == 0, (which, proc.stderr)
    [body] = [r["body"] for r in model_requests(server)]
    system = body["system"]
    return system if isinstance(system, str) else str(system[-1]["text"])
