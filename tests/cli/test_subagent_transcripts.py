"""A subagent's conversation in a file of its own, as Claude Code keeps it (`<session>/subagents/agent-<id>.jsonl` and
its `.meta.json`): written by `agentteams -p`, named by the id its stream-json lines give it, mirrored, left out of a
resume, and shown by `agentteams logs` under the Task call that ran it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from agentteams.agent.subagent_run import SubagentCall, SubagentRecord
from agentteams.cli.commands.logs import _Printer
from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.transcripts.reader import load
from agentteams.store.transcripts.writer import AssistantMeta, Transcript
from tests.support.cli import Cli
from tests.support.headless import agentteams, notes_work, serve, tool, turns
from tests.support.transcript_checks import entries, faults


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return notes_work(tmp_path)


def test_a_subagent_writes_its_own_transcript_and_metadata(
    cli: Cli, config_root: Path, work: Path, servers: list[MockServer]
) -> None:
    spec = {"routes": [
        {"name": "sub", "match": {"system": "You are a subagent"}, "turns": turns(
            tool("Read", file_path="notes.txt"), "SUBAGENT-REPORT: the notes say draft")},
        {"name": "main", "match": {"tools": True}, "turns": turns(
            tool("Task", description="look at notes", prompt="What do the notes say?", subagent_type="Explore",
                 run_in_background=False),
            "They are a draft.")},
    ]}  # fmt: skip
    server = serve(servers, spec)
    proc = agentteams(cli, work, "-p", "go", "--output-format", "stream-json", "--verbose", "--session-mirror",
                      base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    [started] = [line for line in lines if line.get("subtype") == "task_started"]
    sid, agent_id, tool_use_id = started["session_id"], started["task_id"], started["tool_use_id"]
    main = Layout(config_root).transcript_file(work, sid)
    sub = main.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"
    meta = json.loads(sub.with_name(f"agent-{agent_id}.meta.json").read_text("utf-8"))
    assert meta == {"agentType": "Explore", "isBuiltIn": True, "description": "look at notes",
                    "toolUseId": tool_use_id, "spawnDepth": 1, "requestShape": "foreground",
                    "requestNonInteractive": True, "model": meta["model"], "modelNotNamed": True,
                    "finished": True}  # fmt: skip

    text = sub.read_text("utf-8")
    assert faults(text, sid) == []
    found = entries(text)
    assert {(e["isSidechain"], e["agentId"]) for e in found} == {(True, agent_id)}
    assert found[0]["parentUuid"] is None and found[0]["message"]["content"] == "What do the notes say?"
    assert [e["type"] for e in found] == ["user", "assistant", "user", "assistant"]  # no resume point of its own
    assert "SUBAGENT-REPORT" in json.dumps(found[-1])

    main_entries = entries(main.read_text("utf-8"))
    assert not [e for e in main_entries if e.get("isSidechain")]
    [detail] = [e["toolUseResult"] for e in main_entries if isinstance(e.get("toolUseResult"), dict)]
    assert detail["agentId"] == agent_id and detail["totalToolUseCount"] == 1 and detail["agentType"] == "Explore"
    assert "notes.txt" not in json.dumps(load(main).messages)  # a resume sends the session's turn, not the subagent's

    mirrored = [e for line in lines if line["type"] == "transcript_mirror" and line["filePath"] == str(sub)
                for e in line["entries"]]  # fmt: skip
    assert [e["type"] for e in mirrored] == ["agent_metadata", "user", "assistant", "user", "assistant",
                                             "agent_metadata"]  # fmt: skip
    assert mirrored[-1] == {"type": "agent_metadata", **meta}


def test_logs_shows_a_subagents_turn_from_its_own_file(tmp_path: Path) -> None:
    main = Transcript(tmp_path / "s.jsonl", "s", cwd=str(tmp_path))
    main.prompt("team-lead", "go")
    use = {"type": "tool_use", "id": "toolu_1", "name": "Task", "input": {"prompt": "look"}}
    main.assistant("team-lead", [use], AssistantMeta("msg_1", "m", "tool_use", {}))
    record = SubagentRecord.open(main, SubagentCall("a0123456789abcdef", "toolu_1", "look"), kind="Explore",
                                 built_in=True, model="m", named=False, interactive=False, secrets=())  # fmt: skip
    record.transcript.prompt("team-lead/Explore", "look")
    record.transcript.assistant("team-lead/Explore", [{"type": "text", "text": "SUB-SAYS"}],
                                AssistantMeta("msg_2", "m", "end_turn", {}))  # fmt: skip
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "SUB-SAYS"}
    main.tool_result("team-lead", result, record.finish("look", "SUB-SAYS"))
    out = io.StringIO()
    _Printer(Console(file=out, width=200, highlight=False), main.path).print_new()
    printed = out.getvalue().splitlines()
    at = [i for i, line in enumerate(printed) if "(team-lead/Explore)" in line]
    assert [printed[i].strip() for i in at] == ["(team-lead/Explore) > look", "(team-lead/Explore) SUB-SAYS"]
    assert at[-1] < next(i for i, line in enumerate(printed) if "⎿ SUB-SAYS" in line)
