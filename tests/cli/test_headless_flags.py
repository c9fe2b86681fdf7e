"""Claude Code's headless flags, each on a real `agentteams -p` process against the scripted server: what each does
(--system-prompt, --add-dir, --fallback-model, --input-format stream-json) and how each is refused when misused
(--session-id, an empty -p, stream-json output without --verbose). The refusals are worded as the real CLI's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import (
    KEY,
    agentteams,
    notes_work,
    overloaded,
    result_text,
    script,
    serve,
    tool,
    tool_results,
)
from tests.support.stream_json import STREAM_ARGS, handshake, read_turn, sdk_user_line
from tests.support.wait import wait_until

OPUS = "claude-opus-4-1-20250805"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return notes_work(tmp_path)  # notes.txt in draft (tests/support/headless.py), not the conftest's empty dir


def messages(server: MockServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if r["path"].startswith("/v1/messages") and r["body"].get("tools")]


def system_text(body: dict[str, Any]) -> str:
    system = body["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


def test_system_prompt_replaces_ours_and_the_append_follows(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, script("ok"))
    proc = agentteams(cli, work, "-p", "hi", "--system-prompt", "SYS-REPLACED", "--append-system-prompt",
                      "SYS-APPENDED", base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    [body] = messages(server)
    assert system_text(body) == "SYS-REPLACED\n\nSYS-APPENDED"  # the real CLI joins them the same way
    proc = agentteams(cli, work, "-p", "hi", "--append-system-prompt", "SYS-APPENDED", base_url=server.base_url)
    ours = system_text(messages(server)[-1])
    assert "SYS-REPLACED" not in ours and str(work) in ours and ours.endswith("SYS-APPENDED")


@pytest.mark.parametrize("added", [False, True])
def test_add_dir_makes_another_working_directory(
    cli: Cli, work: Path, tmp_path: Path, servers: list[MockServer], added: bool
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "data.txt").write_text("OUTSIDE-DATA\n")
    server = serve(servers, script(tool("Read", file_path=str(other / "data.txt")), "read"))
    extra = ("--add-dir", str(other)) if added else ()
    proc = agentteams(cli, work, "-p", "read it", *extra, base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    [res] = tool_results(server)
    if added:  # as settings' permissions.additionalDirectories: reads there need no permission
        assert not res.get("is_error") and "OUTSIDE-DATA" in result_text(res)
    else:  # -p cannot ask: a read outside the working directories is refused
        assert res.get("is_error") and "OUTSIDE-DATA" not in result_text(res)


def test_fallback_model_answers_when_the_model_stays_overloaded(
    cli: Cli, work: Path, servers: list[MockServer]
) -> None:
    server = serve(servers, overloaded(3))  # 1 try + CLAUDE_CODE_MAX_RETRIES=2, all overloaded
    proc = agentteams(cli, work, "-p", "hi", "--model", "sonnet", "--fallback-model", "opus",
                      base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "FELL"
    models = [b["model"] for b in messages(server)]
    assert len(models) == 4 and len(set(models[:3])) == 1 and "sonnet" in models[0] and "opus" in models[3]


def test_without_a_fallback_model_overload_fails_the_run(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, overloaded(3))
    proc = agentteams(cli, work, "-p", "hi", base_url=server.base_url)
    assert proc.returncode == 1 and "FELL" not in proc.stdout
    assert "overloaded" in proc.stderr.lower() and len(messages(server)) == 3


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1 and proc.stdout == "", proc
    [line] = proc.stderr.splitlines()
    assert line.startswith("agentteams: error: ")
    return line


@pytest.mark.parametrize(
    ("args", "stdin", "expected"),
    [
        (("-p", "hi", "--session-id", "nope"), None, "must be a valid UUID"),
        (("-p", "hi", "--session-id", "0" * 32), None, "must be a valid UUID"),  # hex without hyphens: no
        (("-p", ""), "", "input must be provided either through stdin or as a prompt argument"),
        (("-p",), "", "input must be provided either through stdin or as a prompt argument"),
        (("-p", "   "), "", "input contained only whitespace"),
        (("-p",), " \n\t\n", "input contained only whitespace"),
        (("-p", "hi", "--output-format", "stream-json"), None, "--output-format=stream-json requires --verbose"),
        (("-p", "--input-format", "stream-json"), "", "--input-format=stream-json requires --output-format"),
        (("-p", "hi", "--input-format", "xml"), None, "--input-format must be one of text, stream-json"),
    ],
)
def test_misused_headless_flags_are_refused_in_one_line(
    cli: Cli, work: Path, args: tuple[str, ...], stdin: str | None, expected: str
) -> None:
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}  # never reached
    proc = subprocess.run(cli.argv(*args), env=env, cwd=work, input=stdin or "", capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert expected in one_error(proc)


def test_a_uuid_session_id_and_verbose_are_taken(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, script("ok"))
    sid = "3f2b8a9e-5c1d-4e7f-9a0b-1c2d3e4f5a6b"
    proc = agentteams(cli, work, "-p", "hi", "--session-id", sid, "--verbose", "--output-format", "json",
                      base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["session_id"] == sid


# -- --input-format stream-json, driven as the Agent SDK's subprocess transport drives Claude Code ---------------


def two_turns() -> dict[str, Any]:
    return script("FIRST-ANSWER", "SECOND-ANSWER")


def test_two_turn_conversation_over_one_process(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, two_turns())
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}
    proc = cli.popen(*STREAM_ARGS, env=env, cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(sdk_user_line("first question"))
    proc.stdin.flush()
    first = read_turn(proc.stdout)  # the second message is written only after the first answer, as a script would
    proc.stdin.write(sdk_user_line("second question"))
    proc.stdin.flush()
    second = read_turn(proc.stdout)
    proc.stdin.close()  # end of input: the process finishes and exits
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    assert [x["type"] for x in first] == [x["type"] for x in second] == ["system", "assistant", "result"]
    assert first[-1]["result"] == "FIRST-ANSWER" and second[-1]["result"] == "SECOND-ANSWER"
    assert len({x["session_id"] for x in first + second}) == 1  # one conversation
    later = messages(server)[-1]["messages"]  # the second request carries the whole first turn
    said = json.dumps(later)
    assert "first question" in said and "FIRST-ANSWER" in said and "second question" in said
    assert proc.stdout.read() == ""


def test_stream_json_input_skips_a_bad_line_in_one_warning(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, two_turns())
    stdin = "not json\n" + sdk_user_line("first question")
    proc = agentteams(cli, work, *STREAM_ARGS, base_url=server.base_url, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    [warning] = proc.stderr.splitlines()
    assert "line 1 is not JSON" in warning
    assert json.loads(proc.stdout.splitlines()[-1])["result"] == "FIRST-ANSWER"


def test_the_sdk_handshake_is_answered_before_the_conversation(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, two_turns())
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}
    proc = cli.popen(*STREAM_ARGS, env=env, cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    handshake(proc.stdin, proc.stdout)  # answered before any message: the SDK waits for it
    proc.stdin.write(sdk_user_line("first question"))
    proc.stdin.close()
    assert read_turn(proc.stdout)[-1]["result"] == "FIRST-ANSWER"
    assert proc.wait(timeout=60) == 0


def control(request_id: str, subtype: str, **fields: Any) -> str:
    return json.dumps({"type": "control_request", "request_id": request_id,
                       "request": {"subtype": subtype, **fields}}) + "\n"  # fmt: skip


def test_the_sdk_s_model_and_mode_changes_and_interrupt_are_obeyed(
    cli: Cli, work: Path, servers: list[MockServer]
) -> None:
    slow = {"text": "SLOW-" + "x" * 400, "chunk": 2, "delta_delay_ms": 50}  # ~10 s unless interrupted
    server = serve(servers, {"routes": [{"name": "main", "match": {"tools": True}, "turns": [
        {"content": [{"type": "text", "text": "FIRST-ANSWER"}]}, slow,
        {"content": [{"type": "text", "text": "AFTER-INTERRUPT"}]}]}]})  # fmt: skip
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}
    proc = cli.popen(*STREAM_ARGS, env=env, cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(control("r1", "set_model", model="haiku") + control("r2", "set_permission_mode", mode="plan")
                     + control("r3", "set_permission_mode", mode="sideways"))  # fmt: skip
    proc.stdin.flush()
    lines: list[dict[str, Any]] = []

    def status_seen() -> bool:  # the mode change's status line follows its reply
        return any(line["type"] == "system" and line.get("subtype") == "status" for line in lines)

    while sum(1 for line in lines if line["type"] == "control_response") < 3 or not status_seen():
        lines.append(json.loads(proc.stdout.readline()))
    replies = {r["response"]["request_id"]: r["response"] for r in lines if r["type"] == "control_response"}
    assert {k: r["subtype"] for k, r in replies.items()} == {"r1": "success", "r2": "success", "r3": "error"}
    assert replies["r1"]["response"]["model"].startswith("claude-haiku") and replies["r2"]["response"] == {
        "mode": "plan"
    }
    assert replies["r3"]["error_code"] == "invalid_mode" and "must be one of" in replies["r3"]["error"]
    replayed = [line for line in lines if line["type"] == "user" and line.get("isReplay")]
    assert len(replayed) == 1 and "Set model to `haiku (claude-haiku" in replayed[0]["message"]["content"]
    assert [line["permissionMode"] for line in lines if line.get("subtype") == "status"] == ["plan"]
    proc.stdin.write(sdk_user_line("first question"))
    proc.stdin.flush()
    first = read_turn(proc.stdout)
    assert first[0]["model"].startswith("claude-haiku") and first[0]["permissionMode"] == "plan"
    assert messages(server)[-1]["model"].startswith("claude-haiku")
    proc.stdin.write(sdk_user_line("a slow one"))
    proc.stdin.flush()
    wait_until(lambda: len(messages(server)) == 2, 30, "the slow request to be under way")
    proc.stdin.write(control("r4", "interrupt"))
    proc.stdin.flush()
    cut = read_turn(proc.stdout)
    reply = next(x for x in cut if x["type"] == "control_response")
    assert (reply["response"]["request_id"], reply["response"]["subtype"]) == ("r4", "success")
    assert (cut[-1]["subtype"], cut[-1]["terminal_reason"]) == ("error_during_execution", "aborted_streaming")
    assert cut[-1]["errors"] == ["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"]
    marks = [x["message"]["content"] for x in cut if x["type"] == "user"]
    assert marks == [[{"type": "text", "text": "[Request interrupted by user]"}]]  # its marker, as claude writes it
    proc.stdin.write(sdk_user_line("go on"))
    proc.stdin.close()
    assert read_turn(proc.stdout)[-1]["result"] == "AFTER-INTERRUPT"  # the conversation goes on
    assert proc.wait(timeout=60) == 0, proc.stderr.read()


def test_agents_json_adds_agent_types_a_subagent_starts_as(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    task = tool(
        "Task", subagent_type="reviewer", description="review", prompt="Review notes.txt", run_in_background=False
    )
    server = serve(servers, {"routes": [
        {"name": "reviewer", "match": {"system": "REVIEWER-INSTRUCTIONS"}, "turns": ["REVIEWED"]},
        {"name": "main", "turns": [{"content": [task]}, "MAIN-DONE"]},
    ]})  # fmt: skip
    defined = {"reviewer": {"description": "Reviews code", "prompt": "REVIEWER-INSTRUCTIONS", "tools": ["Read"]}}
    proc = agentteams(cli, work, "-p", "go", "--agents", json.dumps(defined), base_url=server.base_url)
    assert proc.returncode == 0 and proc.stdout.strip() == "MAIN-DONE", proc.stderr
    assert "reviewer" in [r.get("route") for r in server.requests]
    bad = agentteams(cli, work, "-p", "go", "--agents", "[1]", base_url=server.base_url)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "--agents" in bad.stderr
