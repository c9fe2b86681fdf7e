"""Compaction's mechanics on the in-memory model: the summary request, the conversation that goes on from the
summary, the transcript's boundary, the refusal, PreCompact / SessionStart hooks and the automatic threshold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.agent.compaction import (
    GO_ON,
    INSTRUCTION_MARK,
    NOTHING_TO_COMPACT,
    CompactError,
    policy_for,
)
from agentteams.agent.session import Session, SessionOptions
from agentteams.model.types import Usage
from agentteams.settings.types import Settings
from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.store.transcripts.reader import load, read_entries
from agentteams.tools.base import ToolContext
from agentteams.tools.team.team_tools import SendMessageTool
from tests.support.fake_model import FakeModel, last_user_text, text, tool
from tests.support.hooks import settings_with
from tests.support.runtime import TEAM, WAIT, quick_polls, running_teammate, teammate_rig
from tests.support.transcript_checks import faults
from tests.support.wait import wait_until

SUMMARY = "SUMMARY: the user asked for two answers and got them."


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_polls(monkeypatch)


def session(tmp_path: Path, layout: Layout, model: FakeModel, settings: Settings | None = None) -> Session:
    options = SessionOptions(cwd=tmp_path, permission_mode="bypassPermissions", settings=settings or Settings())
    return Session(options, model, layout=layout)


def _texts(message: dict[str, object]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    return "\n".join(str(b.get("text", "")) for b in content)


def test_compact_summarises_then_the_conversation_goes_on_from_the_summary(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[text("First answer.")], [text("Second answer.")], [text(SUMMARY)], [text("Third.")]])
    s = session(tmp_path, layout, model)
    s.run("first question")
    s.run("second question")
    done = s.compact("keep the numbers")
    ask = model.requests[2]  # the summary request: the normal request's model, system and tools, then the ask
    assert (ask.model, ask.system, [t.name for t in ask.tools]) == (
        model.requests[1].model,
        model.requests[1].system,
        [t.name for t in model.requests[1].tools],
    )
    assert ask.messages[:4] == [*model.requests[1].messages, {"role": "assistant", "content": [text("Second answer.")]}]
    assert INSTRUCTION_MARK in last_user_text(ask.messages) and "keep the numbers" in last_user_text(ask.messages)
    assert done.trigger == "manual" and done.summary == SUMMARY and done.post_tokens < done.pre_tokens + 100
    assert len(s.agent.messages) == 1 and SUMMARY in _texts(s.agent.messages[0])
    assert s.ledger.total().usage.input_tokens == 30  # the summary request is counted as any answer
    s.run("third question")
    after = model.requests[3].messages  # shorter: the summary, then the new prompt
    assert len(after) == 2 and SUMMARY in _texts(after[0]) and "first question" not in json.dumps(after)
    assert faults(s.transcript.path.read_text(), s.options.session_id) == []
    boundary = [e for e in read_entries(s.transcript.path) if e.get("subtype") == "compact_boundary"]
    assert [b["compactMetadata"]["trigger"] for b in boundary] == ["manual"]
    metadata = boundary[0]["compactMetadata"]
    assert (metadata["preTokens"], metadata["postTokens"]) == (done.pre_tokens, done.post_tokens)
    assert isinstance(metadata["durationMs"], int)
    resumed = load(s.transcript.path).messages  # a resumed session starts from the summary
    assert SUMMARY in json.dumps(resumed[0]) and "third question" in json.dumps(resumed)
    assert "first question" not in json.dumps(resumed)


def test_a_summary_in_tags_is_taken_without_its_draft(tmp_path: Path, layout: Layout) -> None:
    answer = f"<analysis>DRAFT notes</analysis>\n<summary>{SUMMARY}</summary>"
    s = session(tmp_path, layout, FakeModel([[text("Answer.")], [text(answer)]]))
    s.run("question")
    assert s.compact().summary == SUMMARY and "DRAFT" not in json.dumps(s.agent.messages)


def test_nothing_to_compact_is_refused_without_a_request(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[text("Answer.")], [text(SUMMARY)]])
    s = session(tmp_path, layout, model)
    with pytest.raises(CompactError, match=NOTHING_TO_COMPACT):
        s.compact()
    s.run("question")
    s.compact()
    with pytest.raises(CompactError, match=NOTHING_TO_COMPACT):  # the summary alone: nothing more to compact
        s.compact()
    assert model.calls == 2


def test_auto_compaction_once_past_the_threshold_keeps_the_pending_prompt(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "50000")  # threshold 50000 - 8192 - 13000 = 28808
    sizes = [10_000, 20_000, 30_000, 0, 2_000, 3_000]  # request 4 is the summary; after it the context is small
    model = FakeModel([[text(f"Answer {i}.")] for i in range(3)] + [[text(SUMMARY)], [text("After.")], [text("More.")]],
                      usage=lambda n: Usage(input_tokens=sizes[n], output_tokens=10))  # fmt: skip
    s = session(tmp_path, layout, model)
    assert s.compact_policy().threshold == 28_808
    for i in range(3):
        s.run(f"prompt {i}")
    used, window = s.context_use()
    assert window == 50_000 and used >= 30_010  # the last answer's measure plus nothing added since
    s.run("prompt 3")
    s.run("prompt 4")
    assert INSTRUCTION_MARK in last_user_text(model.requests[3].messages)
    assert "prompt 3" not in json.dumps(model.requests[3].messages)  # the pending prompt is kept, not summarised
    after = model.requests[4].messages
    assert len(after) == 2 and SUMMARY in _texts(after[0]) and _texts(after[1]) == "prompt 3"
    assert model.calls == 6  # one compaction only: the context after it is small
    boundaries = [e for e in read_entries(s.transcript.path) if e.get("subtype") == "compact_boundary"]
    assert [b["compactMetadata"]["trigger"] for b in boundaries] == ["auto"]
    assert faults(s.transcript.path.read_text(), s.options.session_id) == []
    resumed = json.dumps(load(s.transcript.path).messages)
    assert resumed.index(SUMMARY) < resumed.index("prompt 3") < resumed.index("prompt 4")


def test_auto_compaction_in_the_middle_of_a_turn_goes_on_with_the_task(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "50000")
    sizes = [40_000, 0, 1_000]
    model = FakeModel([[tool("Bash", command="echo hi")], [text(SUMMARY)], [text("Done.")]],
                      usage=lambda n: Usage(input_tokens=sizes[n]))  # fmt: skip
    s = session(tmp_path, layout, model)
    result = s.run("do it")
    assert result.text == "Done." and model.calls == 3
    assert "tool_result" in json.dumps(model.requests[1].messages[-2])  # the tool's result is summarised too
    [summary] = model.requests[2].messages
    assert SUMMARY in _texts(summary) and GO_ON in _texts(summary)
    assert faults(s.transcript.path.read_text(), s.options.session_id) == []


def test_precompact_hooks_block_or_add_instructions_and_session_start_adds_context(
    tmp_path: Path, layout: Layout
) -> None:
    hooks: dict[str, object] = {
        "PreCompact": [
            {"matcher": "manual", "hooks": [{"type": "command", "command": "echo keep the file names"}]},
            {"matcher": "auto", "hooks": [{"type": "command", "command": "echo not now >&2; exit 2"}]},
        ],
        "SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": "echo fresh context"}]}],
    }
    model = FakeModel([[text("Answer.")], [text(SUMMARY)]])
    s = session(tmp_path, layout, model, settings_with(hooks))
    s.run("question")
    s.compact("mine")
    ask = last_user_text(model.requests[1].messages)
    assert "mine" in ask and "keep the file names" in ask
    assert "fresh context" in _texts(s.agent.messages[0])
    blocked = FakeModel([[text("Answer.")]])
    b = session(tmp_path, layout, blocked, settings_with(hooks))
    b.run("question")
    with pytest.raises(CompactError, match=r"^Compaction blocked by PreCompact hook: \[echo not now.*\]: not now$"):
        b.compactor.compact(trigger="auto")
    assert blocked.calls == 1 and len(b.agent.messages) == 2


def test_the_policy_follows_claude_codes_settings() -> None:
    base = policy_for("claude-sonnet-4-6", 8192, env={})
    assert (base.window, base.threshold, base.auto, base.manual) == (200_000, 178_808, True, True)
    assert policy_for("claude-sonnet-4-6[1m]", 32_000, env={}).threshold == 1_000_000 - 20_000 - 13_000
    assert policy_for("m", 8192, env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}).threshold == 95_904
    assert policy_for("m", 8192, env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "99"}).threshold == 178_808  # never later
    assert policy_for("m", 8192, env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "x"}).threshold == 178_808
    assert not policy_for("m", 8192, env={"DISABLE_AUTO_COMPACT": "1"}).auto
    assert not policy_for("m", 8192, env={}, auto_setting=False).auto
    off = policy_for("m", 8192, env={"DISABLE_COMPACT": "true"})
    assert not off.auto and not off.manual


def test_autocompact_off_in_the_settings_never_compacts(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "50000")
    model = FakeModel([[text("One.")], [text("Two.")]], usage=lambda n: Usage(input_tokens=45_000))
    s = session(tmp_path, layout, model, Settings(merged={"autoCompactEnabled": False}))
    s.run("a")
    s.run("b")
    assert model.calls == 2 and len(s.agent.messages) == 4


@pytest.mark.usefixtures("quick")
def test_a_teammate_asked_by_its_lead_compacts_when_idle_and_stays_in_its_team(tmp_path: Path, layout: Layout) -> None:
    model = FakeModel([[text("Did one.")], [text(SUMMARY)], [text("Did two.")]])
    rig = teammate_rig(layout, tmp_path, model)
    lead = ToolContext(cwd=tmp_path, store=FileStore(layout), session_id="lead-s", team_name=TEAM)
    send = SendMessageTool()
    refused = send.run({"type": "compact_request", "recipient": "alice"}, lead)
    assert refused.is_error and "not an agentteams teammate" in refused.content  # no presence yet: maybe not ours
    rig.from_lead("Do one.")
    with running_teammate(rig):
        rig.wait_turns(1)
        asked = send.run({"type": "compact_request", "recipient": "alice", "content": "keep the task ids"}, lead)
        assert not asked.is_error, asked.content
        wait_until(lambda: len(rig.runtime.session.agent.messages) == 1, WAIT, "alice to compact")
        assert "keep the task ids" in last_user_text(model.requests[1].messages)
        presence = rig.runtime.store.presence.read(TEAM, "alice")
        assert (
            presence is not None and 0 < presence.context_tokens < 2000 and presence.context_window == 1_000_000
        )  # the default model (opus 5.5): a 1M window
        rig.from_lead("Do two.")
        rig.wait_turns(2)
        first = model.requests[2].messages[0]
        assert SUMMARY in _texts(first) and "Do one." not in json.dumps(model.requests[2].messages)
        assert rig.member().name == "alice" and rig.turns_done() == 2  # no turn for the request itself
    mate = ToolContext(cwd=tmp_path, store=FileStore(layout), session_id="s2", agent_name="bob", team_name=TEAM,
                       is_lead=False)  # fmt: skip
    assert "Only the team lead" in send.run({"type": "compact_request", "recipient": "alice"}, mate).content


def test_a_resumed_session_past_the_threshold_compacts_before_its_first_request(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As 2.1.330 in the golden `auto_compact`: the size is the newest answer's usage read back from the file."""
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "50000")
    first = session(tmp_path, layout, FakeModel([[text("Big answer.")]], usage=lambda n: Usage(input_tokens=40_000)))
    first.run("MARK big")
    again = FakeModel([[text(SUMMARY)], [text("Next answer.")]])
    resumed = Session(SessionOptions(cwd=tmp_path, resume=load(first.transcript.path)), again, layout=layout)
    assert resumed.context_use()[0] == 40_000  # its usage; nothing added since
    resumed.run("MARK next")
    assert INSTRUCTION_MARK in last_user_text(again.requests[0].messages)
    assert SUMMARY in _texts(again.requests[1].messages[0]) and "MARK big" not in json.dumps(again.requests[1].messages)
