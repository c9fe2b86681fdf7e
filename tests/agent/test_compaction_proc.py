"""Compaction end to end on a real `agentteams -p` process against the scripted server: a 40-turn conversation
(stream-json input, as the Agent SDK drives it) whose answers report a growing context passes the threshold: one
automatic compaction, the next requests short and carrying the summary, cache breakpoints still placed; and
`-p -c "/compact"` as the real CLI accepts it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.agent.compaction import INSTRUCTION_MARK, NOTHING_TO_COMPACT, policy_for
from agentteams.mockapi import MockServer
from agentteams.mockapi.usage import strip_cache_control
from agentteams.store.transcripts.reader import read_entries
from tests.support.cli import Cli
from tests.support.headless import KEY, agentteams, notes_work, serve
from tests.support.stream_json import STREAM_ARGS, sdk_user_line
from tests.support.transcript_checks import faults

TURNS = 40
STEP = 5_000  # each answer reports 5k more input tokens: past the default threshold (178 808) after turn 36
SUMMARY = "MOCKSUMMARY of the forty turns"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return notes_work(tmp_path)  # notes.txt in draft (tests/support/headless.py), not the conftest's empty dir


def forty_turns() -> dict[str, Any]:
    measured = [{"text": f"ANSWER-{i:02d}", "usage": {"input_tokens": STEP * i, "cache_read_input_tokens": 0,
                                                     "cache_creation_input_tokens": 0}}
                for i in range(1, 37)]  # fmt: skip
    rest = [{"text": f"ANSWER-{i:02d}"} for i in range(37, TURNS + 1)]  # after the summary: the real, small size
    return {"routes": [
        {"name": "summary", "match": {"last_prompt": INSTRUCTION_MARK}, "turns": [{"text": SUMMARY}]},
        {"name": "main", "match": {"tools": True}, "turns": measured + rest},
    ]}  # fmt: skip


def bodies(server: MockServer) -> list[tuple[str | None, dict[str, Any], dict[str, Any]]]:
    """(route, request body, response) of every Messages request, in order."""
    return [(r["route"], r["body"], r.get("response") or {}) for r in server.requests if r["path"] == "/v1/messages"]


def marked(block_or_item: Any) -> bool:
    return isinstance(block_or_item, dict) and "cache_control" in block_or_item


def test_a_forty_turn_conversation_compacts_once_and_goes_on(
    cli: Cli, work: Path, config_root: Path, servers: list[MockServer]
) -> None:
    server = serve(servers, forty_turns())
    env = {
        **cli.env(),
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_MODEL": "claude-sonnet-4-6",
    }  # a 200k window (the default opus 5.5 has 1M)
    for name in ("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "DISABLE_AUTO_COMPACT", "CLAUDE_CODE_AUTO_COMPACT_WINDOW"):
        env.pop(name, None)
    proc = cli.popen(*STREAM_ARGS, env=env, cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[dict[str, Any]] = []
    for i in range(1, TURNS + 1):  # one at a time: prompts that wait while a turn runs go in together, as claude's
        proc.stdin.write(sdk_user_line(f"PROMPT-{i:02d}"))
        proc.stdin.flush()
        while not lines or lines[-1]["type"] != "result" or sum(x["type"] == "result" for x in lines) < i:
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else "no more output"
            lines.append(json.loads(line))
    _out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    results = [x for x in lines if x["type"] == "result"]
    [boundary_line] = [x for x in lines if x.get("subtype") == "compact_boundary"]  # as the Agent SDK reads it
    assert boundary_line["compact_metadata"]["trigger"] == "auto"
    assert [r["result"] for r in results] == [f"ANSWER-{i:02d}" for i in range(1, TURNS + 1)]  # it went on
    sent = bodies(server)
    routes = [route for route, _, _ in sent]
    assert routes.count("summary") == 1 and routes.index("summary") == 36 and len(sent) == TURNS + 1
    _, before, _ = sent[35]
    _, ask, _ = sent[36]
    # the summary request is a normal one: same tools and system, the conversation so far, then the instruction
    assert (ask["tools"], ask["system"], ask["model"]) == (before["tools"], before["system"], before["model"])
    assert strip_cache_control(ask["messages"][: len(before["messages"])]) == strip_cache_control(before["messages"])
    threshold = policy_for(ask["model"], ask["max_tokens"], env={}).threshold
    _, after, answered = sent[37]
    said = json.dumps(after["messages"])
    assert SUMMARY in said and "PROMPT-37" in said and "PROMPT-36" not in said and "ANSWER-36" not in said
    assert len(json.dumps(after)) // 4 < threshold and answered["usage"]["input_tokens"] < threshold
    for _, body, _ in sent[37:]:  # breakpoints are placed after the compaction as before it
        assert marked(body["tools"][-1]) and marked(body["system"][-1]) and marked(body["messages"][-1]["content"][-1])
    (_, one, _), (_, two, reply) = sent[38], sent[39]
    n = len(one["messages"])  # the next request repeats the earlier one byte for byte up to its breakpoint ...
    assert json.dumps(strip_cache_control(two["messages"][:n])) == json.dumps(strip_cache_control(one["messages"]))
    assert marked(two["messages"][n - 1]["content"][-1])  # ... and marks it, so its cache write is read back
    assert reply["usage"]["cache_read_input_tokens"] > 0
    [transcript] = (config_root / "projects").glob("*/*.jsonl")
    assert faults(transcript.read_text(), transcript.stem) == []
    entries = read_entries(transcript)
    [boundary] = [e for e in entries if e.get("subtype") == "compact_boundary"]
    assert boundary["compactMetadata"]["trigger"] == "auto" and boundary["compactMetadata"]["preTokens"] > threshold
    [summary] = [e for e in entries if e.get("isCompactSummary")]
    assert SUMMARY in json.dumps(summary["message"]) and summary["parentUuid"] == boundary["uuid"]


def test_print_compact_compacts_the_continued_session(
    cli: Cli, work: Path, config_root: Path, servers: list[MockServer]
) -> None:
    server = serve(servers, {"routes": [
        {"name": "summary", "match": {"last_prompt": INSTRUCTION_MARK}, "turns": [{"text": SUMMARY}]},
        {"name": "main", "match": {"tools": True}, "turns": [{"text": "Before answer."}, {"text": "After answer."}]},
    ]})  # fmt: skip
    refused = agentteams(cli, work, "-p", "/compact", base_url=server.base_url)  # as 2.1.330: a result, exit 0
    assert (refused.returncode, refused.stdout) == (0, f"{NOTHING_TO_COMPACT}\n"), refused.stderr
    assert agentteams(cli, work, "-p", "MARK before", base_url=server.base_url).stdout.strip() == "Before answer."
    done = agentteams(cli, work, "-p", "-c", "--output-format", "json", "/compact keep the marks",
                      base_url=server.base_url)  # fmt: skip
    result = json.loads(done.stdout)
    assert (done.returncode, result["result"], result["subtype"], result["num_turns"]) == (0, "", "success", 0)
    after = agentteams(cli, work, "-p", "-c", "MARK after", base_url=server.base_url)
    assert after.stdout.strip() == "After answer."
    sent = bodies(server)
    assert [route for route, _, _ in sent] == ["main", "summary", "main"]
    assert "keep the marks" in json.dumps(sent[1][1]["messages"][-1])
    last = json.dumps(sent[2][1]["messages"])  # the resumed session starts from the summary
    assert SUMMARY in last and "MARK after" in last and "MARK before" not in last
