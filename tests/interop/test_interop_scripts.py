"""Interop tier, scripts: the real claude 2.1.332 and ours on the same input, each against its own scripted server:
piped stdin reaches the model joined to the prompt alike, `--output-format json` is one line and ours has every
key of claude's, the same calls are listed as refused, a budget overrun ends with the same exit code and words,
and a replayed user message has the same keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import tool
from tests.support.script_runs import both, spec, text
from tests.support.stream_json import STREAM_ARGS, sdk_user_line

pytestmark = pytest.mark.timeout(180)
EXPENSIVE = {"input_tokens": 100_000, "output_tokens": 1000}


def prompt_sent(server: MockServer) -> str:
    """The prompt the first main request carried: its first message's last text block (claude puts reminders first)."""
    body = next(r["body"] for r in server.requests if r["path"].startswith("/v1/messages") and r["body"].get("tools"))
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else [b["text"] for b in content if b.get("type") == "text"][-1]


@ccv.only(rc.NEWEST)
def test_piped_stdin_reaches_the_model_as_claude_joins_it(claude: Path, cli: Cli, tmp_path: Path, proj: Path,
                                                          servers: list[MockServer]) -> None:  # fmt: skip
    runs = both(claude, cli, tmp_path, proj, servers, spec(text("ok")), "-p", "  review this ", stdin="a\n  b\n")
    sent = {which: (proc.returncode, proc.stdout, prompt_sent(server)) for which, proc, server in runs}
    assert sent["claude"] == sent["ours"] == (0, "ok\n", "  review this \na\n  b\n")


@ccv.only(rc.NEWEST)
def test_json_is_one_line_with_claudes_keys_and_the_same_refused_calls(claude: Path, cli: Cli, tmp_path: Path,
                                                                       proj: Path,
                                                                       servers: list[MockServer]) -> None:  # fmt: skip
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "not here"}}  # fmt: skip
    hook = {"type": "command", "command": f"echo '{json.dumps(deny)}'"}
    (proj / ".claude").mkdir()
    (proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write", "hooks": [hook]}]}}))  # fmt: skip
    (proj / "x.txt").write_text("old\n")
    script = spec(
        {"content": [tool("Write", file_path=str(proj / "a.txt"), content="hi\n")]},
        {"content": [tool("Read", file_path=str(proj / "x.txt"))]},
        {"content": [tool("Bash", command="rm x.txt", description="rm"), tool("Bash", command="touch y",
                                                                                description="t")]},
        text("DONE"),
    )  # fmt: skip
    results = {}
    for which, proc, _server in both(claude, cli, tmp_path, proj, servers, script, "-p", "go", "--output-format",
                                     "json"):  # fmt: skip
        assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 1, (which, proc.stdout, proc.stderr)
        results[which] = json.loads(proc.stdout)
    theirs, ours = results["claude"], results["ours"]
    assert set(theirs) <= set(ours), set(theirs) - set(ours)
    assert set(next(iter(theirs["modelUsage"].values()))) <= set(next(iter(ours["modelUsage"].values())))
    assert set(theirs["usage"]) <= set(ours["usage"])
    refused = {w: [(d["tool_name"], d["tool_input"]) for d in r["permission_denials"]] for w, r in results.items()}
    assert refused["claude"] == refused["ours"] and len(refused["ours"]) == 3, refused
    # num_turns 5 for 4 model calls: claude counts each tool call of an answer past its first (the two Bash calls)
    for key in ("type", "subtype", "is_error", "result", "stop_reason", "terminal_reason", "num_turns"):
        assert theirs[key] == ours[key], key
    assert (proj / "x.txt").exists()


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("output", ["text", "json"])
def test_a_budget_overrun_ends_as_claudes_does(claude: Path, cli: Cli, tmp_path: Path, proj: Path,
                                               servers: list[MockServer], output: str) -> None:  # fmt: skip
    read = {"content": [tool("Read", file_path=str(proj / "notes.txt"))], "usage": EXPENSIVE}
    (proj / "notes.txt").write_text("draft\n")
    runs = both(claude, cli, tmp_path, proj, servers, spec(read, read, read, text("never")), "-p", "read it",
                "--max-budget-usd", "0.5", "--output-format", output)  # fmt: skip
    ended: dict[str, tuple[Any, ...]] = {}
    for which, proc, _server in runs:
        if output == "text":
            ended[which] = (proc.returncode, proc.stdout)
        else:
            result = json.loads(proc.stdout)
            ended[which] = (proc.returncode, result["subtype"], result["errors"], result["terminal_reason"],
                            result["stop_reason"], "result" in result)  # fmt: skip
    assert ended["claude"] == ended["ours"], ended
    assert ended["ours"][0] == 1


@ccv.only(rc.NEWEST)
def test_a_replayed_user_message_has_claudes_keys(claude: Path, cli: Cli, tmp_path: Path, proj: Path,
                                                  servers: list[MockServer]) -> None:  # fmt: skip
    replays = {}
    for which, proc, _server in both(claude, cli, tmp_path, proj, servers, spec(text("ok")), *STREAM_ARGS,
                                     "--replay-user-messages", stdin=sdk_user_line("hello there")):  # fmt: skip
        lines = [json.loads(line) for line in proc.stdout.splitlines()]
        replayed = [line for line in lines if line.get("isReplay")]
        assert len(replayed) == 1 and lines[-1]["type"] == "result", (which, proc.stdout, proc.stderr)
        replays[which] = replayed[0]
    assert set(replays["claude"]) == set(replays["ours"])
    assert replays["claude"]["message"] == replays["ours"]["message"] == {"role": "user", "content": "hello there"}
