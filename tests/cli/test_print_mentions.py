"""`@path` in a -p prompt, as Claude Code 2.1.332 expands it there too (seen against the scripted server): the file,
read with the Read tool, goes before the prompt's text, through the REPL's own code (agent/typed_input.py); a missing
file, or one a deny rule keeps from Read, is left as typed; a prompt piped on stdin is read the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import agentteams, script, serve


def prompt_blocks(cli: Cli, work: Path, servers: list[MockServer], *args: str, stdin: str | None = None) -> list[Any]:
    server = serve(servers, script("ok"))
    proc = agentteams(cli, work, "-p", *args, base_url=server.base_url, stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    [request] = [r for r in server.requests if r["path"].startswith("/v1/messages") and r["body"].get("tools")]
    content = request["body"]["messages"][-1]["content"]
    return [b for b in content if b.get("type") == "text"] if isinstance(content, list) else [{"text": content}]


def test_a_mentioned_file_goes_before_the_prompt(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    (work / "notes.txt").write_text("NOTES-CONTENT line1\nline2\n", encoding="utf-8")
    blocks = prompt_blocks(cli, work, servers, "summarize @notes.txt please")
    texts = [b["text"] for b in blocks if "Attribution" not in b["text"]]
    assert texts[-1] == "summarize @notes.txt please"
    [read] = [t for t in texts if "NOTES-CONTENT line1" in t]
    assert texts.index(read) < len(texts) - 1 and str(work / "notes.txt") in read
    piped = prompt_blocks(cli, work, servers, stdin="look at @notes.txt")  # the prompt from stdin alone
    assert any("NOTES-CONTENT" in b["text"] for b in piped) and piped[-1]["text"] == "look at @notes.txt"


def test_a_missing_or_denied_file_is_left_as_typed(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    assert "NOPE" not in json.dumps(prompt_blocks(cli, work, servers, "summarize @nope.txt"))
    (work / "secret.txt").write_text("SECRET-CONTENT\n", encoding="utf-8")
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(./secret.txt)"]}}))
    blocks = prompt_blocks(cli, work, servers, "look at @secret.txt")
    assert "SECRET-CONTENT" not in json.dumps(blocks) and blocks[-1]["text"] == "look at @secret.txt"
