"""End to end: `agentteams -p` as a real process, through the real anthropic SDK, against our scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import KEY, agentteams, notes_work, result_text, script, serve, tool, tool_results, turns

CODING_SESSION = script(
    tool("Read", file_path="notes.txt"),
    tool("Edit", file_path="notes.txt", old_string="draft", new_string="final"),
    tool("Bash", command="cat notes.txt && echo COMMAND-RAN"),
    tool("TaskCreate", subject="Ship it", description="release the notes"),
    tool("TaskUpdate", taskId="1", status="completed"),
    "All done: the notes are final.",
)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return notes_work(tmp_path)  # notes.txt in draft (tests/support/headless.py), not the conftest's empty dir


def check_coding_session(config_root: Path, work: Path, server: MockServer) -> None:
    assert (work / "notes.txt").read_text() == "status: final\n"
    results = tool_results(server)
    assert len(results) == 5 and not any(r.get("is_error") for r in results)
    assert "COMMAND-RAN" in result_text(results[2]) and "status: final" in result_text(results[2])
    assert result_text(results[3]) == "Task #1 created successfully: Ship it"
    [task_file] = (config_root / "tasks").glob("*/1.json")
    assert json.loads(task_file.read_text())["status"] == "completed"
    [transcript] = (config_root / "projects").glob("*/*.jsonl")
    text = transcript.read_text()
    assert "COMMAND-RAN" in text and KEY not in text


def test_text_output(cli: Cli, config_root: Path, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, CODING_SESSION)
    proc = agentteams(cli, work, "-p", "finalise the notes", "--dangerously-skip-permissions",
                      base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "All done: the notes are final."
    check_coding_session(config_root, work, server)


def test_json_output(cli: Cli, config_root: Path, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, CODING_SESSION)
    proc = agentteams(
        cli, work, "-p", "finalise the notes", "--output-format", "json", "--permission-mode", "acceptEdits",
        "--allowedTools", "Bash(cat:*) Bash(echo:*)", base_url=server.base_url,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["type"], out["subtype"], out["is_error"]) == ("result", "success", False)
    assert out["result"] == "All done: the notes are final." and out["num_turns"] == 6
    assert out["usage"]["output_tokens"] > 0 and out["usage"]["cache_read_input_tokens"] > 0
    assert out["total_cost_usd"] > 0 and len(out["session_id"]) == 36
    check_coding_session(config_root, work, server)


def test_stream_json_output(cli: Cli, config_root: Path, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, CODING_SESSION)
    proc = agentteams(cli, work, "-p", "finalise the notes", "--output-format", "stream-json", "--verbose",
                      "--dangerously-skip-permissions", base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["type"] == "system" and lines[0]["subtype"] == "init" and "Bash" in lines[0]["tools"]
    assert [x["type"] for x in lines[1:-1]] == ["assistant", "user"] * 5 + ["assistant"]
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "All done: the notes are final."
    check_coding_session(config_root, work, server)


def test_plan_mode_refuses_write(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, script(tool("Write", file_path="new.txt", content="x"), "ok"))
    proc = agentteams(cli, work, "-p", "go", "--permission-mode", "plan", base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    [res] = tool_results(server)
    assert res["is_error"] and "plan mode" in result_text(res)
    assert not (work / "new.txt").exists()


def test_disallowed_rm_is_refused_but_ls_runs(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, script(tool("Bash", command="rm notes.txt"), tool("Bash", command="ls"), "ok"))
    proc = agentteams(cli, work, "-p", "go", "--dangerously-skip-permissions", "--disallowedTools",
                      "Bash(rm:*)", base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rm, ls = tool_results(server)
    assert rm["is_error"] and "Bash(rm:*)" in result_text(rm)
    assert not ls.get("is_error") and "notes.txt" in result_text(ls)
    assert (work / "notes.txt").exists()


def test_delegate_mode_offers_only_coordination_tools(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    server = serve(servers, script("ok"))
    proc = agentteams(cli, work, "-p", "go", "--permission-mode", "delegate", base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    [req] = [r for r in server.requests if r["path"].startswith("/v1/messages")]
    names = {t["name"] for t in req["body"]["tools"]}
    assert names and names <= {
        "TaskCreate",
        "TaskGet",
        "TaskUpdate",
        "TaskList",
        "TeamCreate",
        "TeamDelete",
        "SendMessage",
        "Task",
        "TeamMerge",
    }  # fmt: skip (merging teammates' work coordinates)
    assert not names & {"Bash", "Edit", "Write", "Read"}


def test_overloaded_twice_then_success(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    error = {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded", "retry_after": 0},
             "repeat": 2}  # fmt: skip
    spec = {"routes": [{"name": "main", "match": {"tools": True}, "turns": [error, {"content": [
        {"type": "text", "text": "made it"}]}]}]}  # fmt: skip
    server = serve(servers, spec)
    proc = agentteams(cli, work, "-p", "go", base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "made it"
    assert [r["status"] for r in server.requests if r["path"].startswith("/v1/messages")] == [529, 529, 200]


def test_a_400_is_one_clear_error(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    bad = {"error": {"status": 400, "type": "invalid_request_error", "message": "prompt is too long"}}
    server = serve(servers, {"routes": [{"name": "main", "turns": [bad]}]})
    proc = agentteams(cli, work, "-p", "go", base_url=server.base_url)
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("agentteams: error:") and "400" in line and "prompt is too long" in line


@pytest.mark.parametrize(
    ("args", "key", "url", "expect"),
    [
        (("-p", "go"), None, None, "ANTHROPIC_API_KEY"),
        (("-p", "go"), KEY, "http://127.0.0.1:9", "127.0.0.1:9"),
        (("-p", "go"), KEY, "not a url", "ANTHROPIC_BASE_URL"),
        (("-p", "go", "--model", " "), KEY, None, "sonnet"),  # no name (any other is sent as given, as claude)
        (("-p", "go", "--output-format", "yaml"), KEY, None, "--output-format"),
        (("-p", "go", "--permission-mode", "yolo"), KEY, None, "acceptEdits"),
    ],
)
def test_setup_errors_are_one_line(
    cli: Cli, work: Path, args: tuple[str, ...], key: str | None, url: str | None, expect: str
) -> None:
    proc = agentteams(cli, work, *args, base_url=url, key=key)
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("agentteams: error:") and expect in line, line


def test_an_explore_subagent_reports_back(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    spec = {"routes": [
        {"name": "sub", "match": {"system": "You are a subagent"}, "turns": turns(
            tool("Read", file_path="notes.txt"), "SUBAGENT-REPORT: the notes say draft")},
        {"name": "main", "match": {"tools": True}, "turns": turns(
            tool("Task", description="look at notes", prompt="What do the notes say?", subagent_type="Explore",
                 run_in_background=False),
            "The subagent says the notes are a draft.")},
    ]}  # fmt: skip
    server = serve(servers, spec)
    proc = agentteams(cli, work, "-p", "go", "--output-format", "json", base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["result"] == "The subagent says the notes are a draft." and out["num_turns"] == 2
    sub = [r for r in server.requests if r.get("route") == "sub"]
    assert len(sub) == 2
    assert {t["name"] for t in sub[0]["body"]["tools"]} <= {"Read", "Glob", "Grep", "Bash"}
    task_result = [r for r in tool_results(server) if "SUBAGENT-REPORT" in result_text(r)]
    assert len(task_result) == 1 and not task_result[0].get("is_error")
    assert out["usage"]["output_tokens"] > 0  # the subagent's calls count towards the session's usage
