"""Interop tier: a foreground subagent's transcript, ours beside the real Claude Code's (the pinned newest): its own
`<session>/subagents/agent-<id>.jsonl` and `.meta.json`, the entries' fields and chain, the `agent_metadata` mirror
entries, the Task result naming it, and the Agent SDK's session helpers reading both alike."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support import sdk_e2e_script
from tests.support.cli import Cli
from tests.support.transcript_checks import entries, faults

pytestmark = pytest.mark.timeout(180)

GREETER = {"description": "Replies with a short greeting. Use for greeting tasks.", "model": "haiku",
           "prompt": "Reply with one short friendly sentence. Do not use any tools."}  # fmt: skip
AGENTS = {"greeter": GREETER}
PROMPT = "Use the Agent tool exactly once with subagent_type 'greeter', prompt 'say hi'. Then reply with DONE."
# what claude records that ours has no counterpart for: its request bookkeeping and effort choice
CLAUDE_ONLY = {"apiBlockIndex", "requestRef", "requestedModel", "promptCacheRequested", "effort",
               "perTurnEffort", "madeBy", "pickedEffortModel", "harnessNoteCount", "harnessTailCount",
               "harnessSectionHash", "canContinueAgent"}  # fmt: skip
OURS_ONLY = {"agent", "team"}  # our extra keys, which Claude Code's reader ignores


@dataclass
class Run:
    config: Path
    cwd: Path
    lines: list[dict[str, Any]]
    session: Path  # the main transcript
    sub: Path  # the subagent's

    @property
    def agent_id(self) -> str:
        return self.sub.name.removeprefix("agent-").removesuffix(".jsonl")

    def meta(self) -> dict[str, Any]:
        data = json.loads(self.sub.with_name(f"agent-{self.agent_id}.meta.json").read_text("utf-8"))
        assert isinstance(data, dict)
        return data

    def mirrored(self, path: Path) -> list[dict[str, Any]]:
        return [e for line in self.lines if line["type"] == "transcript_mirror" and line["filePath"] == str(path)
                for e in line["entries"]]  # fmt: skip


def run(cli: str, root: Path) -> Run:
    config, cwd = root / "cfg", root / "work"
    cwd.mkdir(parents=True)
    rc.seed_home(config, [cwd], rc.NEWEST)
    with MockServer(sdk_e2e_script.script()) as server:
        argv = [cli, "-p", "--output-format", "stream-json", "--verbose", "--session-mirror", "--agents",
                json.dumps(AGENTS), "--allowedTools", "Agent,Task", "--", PROMPT]  # fmt: skip
        proc = subprocess.run(argv, cwd=cwd, env=rc.claude_env(config, server.base_url), capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    [session] = (config / "projects").glob("*/*.jsonl")
    [sub] = session.with_suffix("").glob("subagents/agent-*.jsonl")
    return Run(config, cwd, [json.loads(line) for line in proc.stdout.splitlines()], session, sub)


@ccv.only(rc.NEWEST)
def test_a_subagents_transcript_is_kept_as_claude_keeps_it(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    both = run(str(claude), tmp_path / "claude"), run(cli.argv()[0], tmp_path / "ours")
    has_a_file_of_its_own_named_by_the_id_the_stream_gives_it(both)
    the_metadata_file_holds_what_claudes_does(both)
    the_subagents_entries_are_a_sidechain_chained_as_claudes(both)
    the_task_result_names_the_subagent(both)
    the_metadata_is_mirrored_at_the_start_and_the_end(both)
    the_sdks_session_helpers_read_ours_as_claudes(both, monkeypatch)


def conversation(path: Path) -> list[dict[str, Any]]:
    return [e for e in entries(path.read_text("utf-8")) if e["type"] in ("user", "assistant")]


def has_a_file_of_its_own_named_by_the_id_the_stream_gives_it(both: tuple[Run, Run]) -> None:
    for r in both:
        assert re.fullmatch(r"a[0-9a-f]{16}", r.agent_id)
        started = [line for line in r.lines if line.get("subtype") == "task_started"]
        assert [s["task_id"] for s in started] == [r.agent_id]
        assert r.sub.parent == r.session.with_suffix("") / "subagents"
        assert not [e for e in entries(r.session.read_text("utf-8")) if e.get("isSidechain")]


def the_metadata_file_holds_what_claudes_does(both: tuple[Run, Run]) -> None:
    claude, ours = (r.meta() for r in both)
    assert set(ours) <= set(claude) and set(claude) - set(ours) <= CLAUDE_ONLY
    tool_use = {r.meta()["toolUseId"] for r in both}
    assert len(tool_use) == 1  # the scripted Agent call's id, in both
    assert {k: v for k, v in claude.items() if k in ours} == ours
    assert ours["finished"] is True


def the_subagents_entries_are_a_sidechain_chained_as_claudes(both: tuple[Run, Run]) -> None:
    shapes = []
    for r in both:
        text = r.sub.read_text("utf-8")
        assert faults(text, r.session.stem) == []  # one chain from a null parent, the main session's id
        found = conversation(r.sub)
        assert {(e["isSidechain"], e["agentId"]) for e in found} == {(True, r.agent_id)}
        assert found[0]["parentUuid"] is None and found[0]["message"] == {"role": "user", "content": "say hi"}
        main_prompt = next(e for e in conversation(r.session) if e["type"] == "user")
        assert found[0]["promptId"] == main_prompt["promptId"]  # the parent's turn that started it
        assert {e.get("attributionAgent") for e in found if e["type"] == "assistant"} == {"greeter"}
        assert not [e for e in entries(text) if e["type"] == "last-prompt"]
        shapes.append({(e["type"], k) for e in found for k in e})
    claude, ours = shapes
    assert {k for _, k in claude - ours} <= CLAUDE_ONLY and {k for _, k in ours - claude} <= OURS_ONLY


def the_task_result_names_the_subagent(both: tuple[Run, Run]) -> None:
    details = []
    for r in both:
        [detail] = [e["toolUseResult"] for e in conversation(r.session) if isinstance(e.get("toolUseResult"), dict)]
        assert detail["agentId"] == r.agent_id and detail["agentType"] == "greeter" and detail["status"] == "completed"
        assert detail["content"] == [{"type": "text", "text": "Hi there, friend!"}]
        details.append(detail)
    claude, ours = details
    assert set(ours) <= set(claude) and set(claude) - set(ours) <= CLAUDE_ONLY


def the_metadata_is_mirrored_at_the_start_and_the_end(both: tuple[Run, Run]) -> None:
    for r in both:
        mirrored = r.mirrored(r.sub)
        metas = [e for e in mirrored if e["type"] == "agent_metadata"]
        assert len(metas) == 2, [e["type"] for e in mirrored]  # (claude's batches may put its first late)
        assert "finished" not in metas[0] and metas[1]["finished"] is True
        assert {k: v for k, v in metas[1].items() if k != "type"} == r.meta()
        assert [e["uuid"] for e in mirrored if e["type"] != "agent_metadata"] == [
            e["uuid"] for e in entries(r.sub.read_text("utf-8")) if "uuid" in e
        ]


def the_sdks_session_helpers_read_ours_as_claudes(both: tuple[Run, Run], monkeypatch: pytest.MonkeyPatch) -> None:
    from claude_agent_sdk import get_session_messages, get_subagent_messages, list_subagents

    read = []
    for r in both:
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(r.config))
        sid = r.session.stem
        assert list_subagents(sid, str(r.cwd)) == [r.agent_id]
        got = get_subagent_messages(sid, r.agent_id, str(r.cwd))
        sub = [(m.type, m.parent_tool_use_id, m.parent_agent_id) for m in got]
        main = [(m.type, m.parent_tool_use_id) for m in get_session_messages(sid, str(r.cwd))]
        read.append((sub, main))
    assert read[0] == read[1]
    assert read[1][0] == [("user", r.meta()["toolUseId"], None), ("assistant", r.meta()["toolUseId"], None)]
