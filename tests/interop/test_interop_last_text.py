"""Interop tier, an answer of several text blocks: the real claude 2.1.332 keeps only the last one as what the answer
said (the `-p` result in text, json and stream-json, the Stop and SubagentStop hooks' `last_assistant_message`, and a
subagent's report to its caller), and ours keeps the same."""

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
from tests.support.script_runs import SIDE, both, spec

pytestmark = pytest.mark.timeout(180)
TWO = {"content": [{"type": "text", "text": "first block"}, {"type": "text", "text": "second block"}]}


def _result(output: str, stdout: str) -> str:
    if output == "text":
        return stdout
    lines = [json.loads(line) for line in stdout.splitlines()]
    return str(next(line for line in lines if line["type"] == "result")["result"])


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("output", ["text", "json", "stream-json"])
def test_the_result_is_the_last_text_block_as_claudes(claude: Path, cli: Cli, tmp_path: Path, proj: Path,
                                                      servers: list[MockServer], output: str) -> None:  # fmt: skip
    verbose = ["--verbose"] if output == "stream-json" else []
    runs = both(claude, cli, tmp_path, proj, servers, spec(TWO), "-p", "go", "--output-format", output, *verbose)
    said = {which: (proc.returncode, _result(output, proc.stdout)) for which, proc, _server in runs}
    kept = "second block\n" if output == "text" else "second block"
    assert said["claude"] == said["ours"] == (0, kept), said


def _report(server: MockServer) -> str:
    """The text of the tool result the caller got for its Agent call."""
    for request in server.requests:
        for message in request["body"].get("messages", []):
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    return ""


@ccv.only(rc.NEWEST)
def test_hooks_and_a_subagents_report_keep_the_last_text_block(claude: Path, cli: Cli, tmp_path: Path, proj: Path,
                                                               servers: list[MockServer]) -> None:  # fmt: skip
    seen = tmp_path / "hooks.jsonl"
    hook = {"hooks": [{"type": "command", "command": f"cat >> {seen}; echo >> {seen}"}]}
    (proj / ".claude").mkdir()
    (proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [hook], "SubagentStop": [hook]}}))
    sub = {"content": [{"type": "text", "text": "sub one"}, {"type": "text", "text": "sub two"}]}
    call = tool("Agent", description="d", prompt="SUBTASK look", subagent_type="general-purpose",
                run_in_background=False)  # fmt: skip
    script: dict[str, Any] = {"routes": [
        {"name": "sub", "match": {"tools": True, "first_user": "SUBTASK"}, "turns": [sub]},
        {"name": "main", "match": {"tools": True}, "turns": [{"content": [call]}, TWO]}, SIDE]}  # fmt: skip
    found = {}
    for which, proc, server in both(claude, cli, tmp_path, proj, servers, script, "-p", "go",
                                    "--output-format", "json"):  # fmt: skip
        assert proc.returncode == 0, (which, proc.stderr)
        hooks = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
        seen.unlink()
        report = _report(server)
        found[which] = (json.loads(proc.stdout)["result"], sorted((h["hook_event_name"], h["last_assistant_message"])
                                                                  for h in hooks), "sub two" in report,
                        "sub one" in report)  # fmt: skip
    kept = ("second block", [("Stop", "second block"), ("SubagentStop", "sub two")], True, False)
    assert found["claude"] == found["ours"] == kept, found
