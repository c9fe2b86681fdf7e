"""`agentteams -p` in scripts, as real processes against the scripted server, as claude 2.1.332 behaves (seen
offline): piped stdin after the prompt and a silent pipe left after 3 s; `--output-format json` one line with
claude's keys and each refused call; a budget or turn limit in claude's words; --no-session-persistence, -n,
--replay-user-messages, the debug log, and the options that stop before any request."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import KEY, agentteams, serve, tool
from tests.support.stream_json import STREAM_ARGS, sdk_user_line

pytestmark = pytest.mark.timeout(120)

# the keys of claude 2.1.332's json result of a successful run (its `model` aside, ours names it too)
CLAUDE_KEYS = {
    "type", "subtype", "is_error", "result", "session_id", "num_turns", "duration_ms", "duration_api_ms",
    "total_cost_usd", "usage", "modelUsage", "permission_denials", "terminal_reason", "stop_reason",
    "api_error_status", "fast_mode_state", "fast_mode_disabled_reason", "subagent_stats", "safety_stops",
    "queued_turn_count", "result_index", "uuid", "ttft_ms", "ttft_stream_ms", "time_to_request_ms",
    "first_content_frame_ms",
}  # fmt: skip
MODEL_USAGE_KEYS = {"inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens",
                    "webSearchRequests", "costUSD", "contextWindow", "maxOutputTokens", "thinkingTokens",
                    "canonicalModel", "provider", "costBasis"}  # fmt: skip
EXPENSIVE = {"input_tokens": 100_000, "output_tokens": 1000}


def first_prompt(server: MockServer) -> str:
    """The text of the first model request's prompt (its last text block: what the person or script gave)."""
    body = next(r["body"] for r in server.requests if r["path"].startswith("/v1/messages"))
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else [b["text"] for b in content if b.get("type") == "text"][-1]


def test_piped_stdin_reaches_the_model_after_the_prompt(cli: Cli, tmp_path: Path, servers: list[MockServer]) -> None:
    server = serve(servers, {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}]}]}]})
    proc = agentteams(cli, tmp_path, "-p", "review this", base_url=server.base_url, stdin="diff --git a b\n+x\n")
    assert (proc.returncode, proc.stdout) == (0, "ok\n"), proc.stderr
    assert first_prompt(server) == "review this\ndiff --git a b\n+x\n"  # as claude joins them: nothing trimmed


def test_a_pipe_that_never_writes_is_left_after_three_seconds(cli: Cli, tmp_path: Path,
                                                              servers: list[MockServer]) -> None:  # fmt: skip
    server = serve(servers, {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}]}]}]})
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}
    proc = cli.popen("-p", "hi", env=env, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)  # fmt: skip
    try:
        out, err = _wait_open(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
    assert (proc.returncode, out) == (0, "ok\n"), err
    assert "no stdin data received in 3s" in err and first_prompt(server) == "hi"


def _wait_open(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Its output once it exits by itself, stdin still open (communicate would close it)."""
    assert proc.stdout is not None and proc.stderr is not None
    proc.wait(timeout=60)
    return proc.stdout.read(), proc.stderr.read()


def hook_denies_write(cwd: Path) -> None:
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "not here"}}  # fmt: skip
    command = {"type": "command", "command": f"echo '{json.dumps(deny)}'"}
    hooks = {"PreToolUse": [{"matcher": "Write", "hooks": [command]}]}
    (cwd / ".claude").mkdir()
    (cwd / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def test_json_is_one_line_with_claudes_keys_and_every_refused_call(cli: Cli, tmp_path: Path,
                                                                   servers: list[MockServer]) -> None:  # fmt: skip
    hook_denies_write(tmp_path)
    write = tool("Write", file_path=str(tmp_path / "a.txt"), content="hi\n")
    bash = [tool("Bash", command="touch b.txt", description="b"), tool("Bash", command="touch c.txt", description="c")]
    answers = [{"content": [write]}, {"content": bash}, {"content": [tool("Read", file_path=str(tmp_path / "x"))]},
               {"content": [{"type": "text", "text": "DONE"}]}]  # fmt: skip
    (tmp_path / "x").write_text("x\n")
    server = serve(servers, {"routes": [{"name": "main", "turns": answers}]})
    proc = agentteams(cli, tmp_path, "-p", "go", "--output-format", "json", base_url=server.base_url)
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 1, proc.stdout
    result = json.loads(proc.stdout)
    assert set(result) >= CLAUDE_KEYS and result["result"] == "DONE"
    assert set(next(iter(result["modelUsage"].values()))) >= MODEL_USAGE_KEYS
    denied = [(d["tool_name"], d["tool_input"]) for d in result["permission_denials"]]
    assert denied == [("Write", write["input"]), *(("Bash", b["input"]) for b in bash)]  # the hook's, the mode's
    assert all(d["tool_use_id"].startswith("toolu_") for d in result["permission_denials"])
    assert not (tmp_path / "b.txt").exists()


@pytest.mark.parametrize(
    ("flag", "said"), [(("--max-budget-usd", "0.5"), "Error: Exceeded USD budget (0.5)"),
                       (("--max-turns", "1"), "Error: Reached max turns (1)")],
)  # fmt: skip
def test_a_limit_ends_the_run_in_claudes_words(cli: Cli, tmp_path: Path, servers: list[MockServer],
                                               flag: tuple[str, str], said: str) -> None:  # fmt: skip
    read = {"content": [tool("Read", file_path="notes.txt")], "usage": EXPENSIVE}
    (tmp_path / "notes.txt").write_text("draft\n")
    spec = {"routes": [{"name": "main", "turns": [read, read, {"content": [{"type": "text", "text": "never"}]}]}]}
    proc = agentteams(cli, tmp_path, "-p", "read it", *flag, base_url=serve(servers, spec).base_url)
    assert (proc.returncode, proc.stdout) == (1, said), proc.stderr  # on stdout, no newline, as claude's
    as_json = agentteams(cli, tmp_path, "-p", "read it", *flag, "--output-format", "json",
                         base_url=serve(servers, spec).base_url)  # fmt: skip
    result = json.loads(as_json.stdout)
    assert as_json.returncode == 1 and "result" not in result and result["stop_reason"] == "tool_use"


def transcripts(config_root: Path) -> list[Path]:
    return sorted((config_root / "projects").rglob("*.jsonl")) if (config_root / "projects").exists() else []


def test_no_session_persistence_writes_no_transcript_and_a_name_is_recorded(
    cli: Cli, tmp_path: Path, config_root: Path, servers: list[MockServer]
) -> None:
    server = serve(servers, {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}],
                                                                     "repeat": 5}]}]})  # fmt: skip
    proc = agentteams(cli, tmp_path, "-p", "hi", "--no-session-persistence", base_url=server.base_url)
    assert proc.returncode == 0 and transcripts(config_root) == [], proc.stderr
    proc = agentteams(cli, tmp_path, "-n", "nightly review", "-p", "hi", base_url=server.base_url)
    entries = [json.loads(line) for line in transcripts(config_root)[0].read_text().splitlines()]
    named = [(e["type"], e.get("customTitle") or e.get("agentName")) for e in entries[:2]]
    assert named == [("custom-title", "nightly review"), ("agent-name", "nightly review")]


def test_replayed_user_messages_come_back_marked(cli: Cli, tmp_path: Path, servers: list[MockServer]) -> None:
    server = serve(servers, {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}]}]}]})
    proc = agentteams(cli, tmp_path, *STREAM_ARGS, "--replay-user-messages", base_url=server.base_url,
                      stdin=sdk_user_line("hello there"))  # fmt: skip
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["type"] for line in lines] == ["system", "user", "assistant", "result"], proc.stdout
    replay = lines[1]
    assert replay["isReplay"] is True and replay["message"] == {"role": "user", "content": "hello there"}


def test_the_debug_log_goes_where_claude_puts_it(cli: Cli, tmp_path: Path, config_root: Path,
                                                 servers: list[MockServer]) -> None:  # fmt: skip
    server = serve(servers, {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}],
                                                                     "repeat": 5}]}]})  # fmt: skip
    proc = agentteams(cli, tmp_path, "-d", "api", "-p", "hi", base_url=server.base_url)
    assert (proc.returncode, proc.stderr) == (0, "")
    latest = config_root / "debug" / "latest"
    logged = latest.read_text().splitlines()
    assert logged and all("[DEBUG] API: " in line for line in logged), logged  # only the category asked for
    proc = agentteams(cli, tmp_path, "--debug-to-stderr", "--debug", "!api", "-p", "hi", base_url=server.base_url)
    assert "[DEBUG] Debug log of agentteams session" in proc.stderr and "[DEBUG] API" not in proc.stderr
    own = tmp_path / "own.log"
    agentteams(cli, tmp_path, "--debug-file", str(own), "-p", "hi", base_url=server.base_url)
    assert "[DEBUG] API: request to" in own.read_text()


@pytest.mark.parametrize(
    "args",
    [("--bg", "-p", "hi"), ("-p", "hi", "--cloud"), ("--desktop", "-p", "hi"), ("--tmux", "-p", "hi"),
     ("--file", "file_a:a.txt", "-p", "hi"), ("-w", "-p", "hi"), ("--agent", "nosuch", "-p", "hi")],
)  # fmt: skip
def test_what_cannot_run_here_stops_in_one_line_before_any_request(
    cli: Cli, tmp_path: Path, servers: list[MockServer], args: tuple[str, ...]
) -> None:
    server = serve(servers, {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}]}]}]})
    proc = agentteams(cli, tmp_path, *args, base_url=server.base_url)  # tmp_path is no git repository (-w)
    assert proc.returncode == 1 and proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert server.requests == []


def test_options_that_cannot_apply_say_so_and_the_run_goes_on(cli: Cli, tmp_path: Path,
                                                              servers: list[MockServer]) -> None:  # fmt: skip
    server = serve(servers, {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}]}]}]})
    proc = agentteams(cli, tmp_path, "--chrome", "--ide", "-p", "hi", base_url=server.base_url)
    assert proc.returncode == 0 and proc.stdout == "ok\n"
    said = proc.stderr.strip().splitlines()
    assert len(said) == 2 and "--chrome" in said[0] and "--ide" in said[1], said


def test_agent_runs_the_session_as_that_agent_type(cli: Cli, tmp_path: Path, servers: list[MockServer]) -> None:
    server = serve(servers, {"routes": [{"name": "main", "turns": [{"content": [{"type": "text", "text": "ok"}]}]}]})
    agents = {"rev": {"description": "Reviews", "prompt": "YOU-REVIEW", "tools": ["Read", "Grep"], "model": "haiku"}}
    file = tmp_path / "agents.json"
    file.write_text(json.dumps(agents))
    proc = agentteams(cli, tmp_path, "--agents", str(file), "--agent", "rev", "-p", "hi", base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    body: dict[str, Any] = server.requests[0]["body"]
    system = body["system"] if isinstance(body["system"], str) else " ".join(b["text"] for b in body["system"])
    assert "YOU-REVIEW" in system and "haiku" in body["model"]
    assert sorted(t["name"] for t in body["tools"]) == ["Grep", "Read"]


def test_worktree_runs_the_session_in_a_new_worktree(cli: Cli, tmp_path: Path, servers: list[MockServer]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    server = serve(servers, {"routes": [{"name": "main", "turns": [
        {"content": [tool("Bash", command="pwd > where.txt", description="where")]}, "done"]}]})  # fmt: skip
    proc = agentteams(cli, repo, "-w", "feat", "-p", "go", "--dangerously-skip-permissions", base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    place = repo / ".claude" / "worktrees" / "feat"
    assert (place / "where.txt").read_text().strip() == str(place)
    branch = subprocess.run(["git", "-C", str(place), "branch", "--show-current"], capture_output=True, text=True,
                            check=True)  # fmt: skip
    assert branch.stdout.strip() == "worktree-feat"


def test_a_driven_sessions_result_lists_its_own_turns_refusals(cli: Cli, tmp_path: Path,
                                                               servers: list[MockServer]) -> None:  # fmt: skip
    from tests.support.stream_json import read_turn

    answers = [{"content": [tool("Bash", command="touch z", description="z")]}, "first", "second"]
    server = serve(servers, {"routes": [{"name": "main", "turns": [a if isinstance(a, dict) else
                                                                    {"content": [{"type": "text", "text": a}]}
                                                                    for a in answers]}]})  # fmt: skip
    env = {**cli.env(), "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.base_url}
    proc = cli.popen(*STREAM_ARGS, env=env, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    refused = []
    for prompt in ("one", "two"):
        proc.stdin.write(sdk_user_line(prompt))
        proc.stdin.flush()
        refused.append([d["tool_name"] for d in read_turn(proc.stdout)[-1]["permission_denials"]])
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert refused == [["Bash"], []]  # as claude 2.1.332: each result its own turn's
