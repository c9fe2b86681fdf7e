"""Our transcripts in Claude Code's schema and reading them back: the writer keeps the invariants the real CLI's
files keep (tests/golden-*/transcripts), and the reader turns a file (ours or the real CLI's) into exactly the
conversation the real CLI resent when it resumed it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from agentteams.agent.loop import AgentEvent
from agentteams.agent.session import Session, SessionOptions
from agentteams.store.paths import Layout
from agentteams.store.transcripts.reader import fork, load, newest, read_entries, sessions
from agentteams.store.transcripts.writer import AssistantMeta, Transcript, git_branch
from tests.support.fake_model import FakeModel, text, tool
from tests.support.fault_ledger import FaultLedger
from tests.support.repo import TESTS
from tests.support.transcript_checks import faults

ENVELOPE = {"parentUuid", "isSidechain", "uuid", "timestamp", "userType", "entrypoint", "cwd", "sessionId",
            "version", "gitBranch", "type"}  # fmt: skip


def _sent(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request's conversation without the CLI's own context (system-role messages, its elided text blocks)."""
    out = []
    for m in messages:
        if m["role"] == "system":
            continue
        blocks = [{"type": "text", "text": m["content"]}] if isinstance(m["content"], str) else m["content"]
        kept = [{k: (v.rstrip() if k == "text" else v) for k, v in b.items() if k != "cache_control"} for b in blocks
                if not (b.get("type") == "text" and b["text"].startswith("<elided"))]  # fmt: skip
        if kept:
            out.append({"role": m["role"], "content": kept})
    return out


@pytest.mark.parametrize("version", ["2.1.197", "2.1.330"])
@pytest.mark.parametrize("scenario", ["continue", "tools", "two_turns", "resume", "compact", "tool_error"])
def test_reading_a_real_cli_session_gives_what_the_cli_resent(version: str, scenario: str) -> None:
    folder = TESTS / f"golden-{version}" / "transcripts" / scenario
    steps = json.loads((folder / "manifest.json").read_text())["steps"]
    last = [r for s in steps for r in s["requests"] if r["route"] == "main"][-1]
    loaded = load(folder / "00000000-0000-4000-8000-000000000001.jsonl")
    want = _sent(last["messages"])
    got = _sent(loaded.messages)
    assert got[: len(want)] == want  # and then the answer to that request
    assert got[-1]["role"] == "assistant" and len(got) == len(want) + 1
    assert loaded.model is not None and loaded.model.startswith("claude-")
    assert loaded.session_id == "00000000-0000-4000-8000-000000000001"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    (path / "notes.txt").write_text("hello notes\n")
    return path


def _played(repo: Path, layout: Layout) -> tuple[Session, FakeModel]:
    model = FakeModel([
        [text("Running."), tool("Bash", command="echo hi"), tool("Read", file_path=str(repo / "notes.txt"))],
        [text("All done.")],
        [tool("Bash", command="exit 3")],
        [text("Second done.")],
    ])  # fmt: skip
    s = Session(SessionOptions(cwd=repo, permission_mode="bypassPermissions"), model, layout=layout,
                secrets=("sk-ant-SECRET-123456",))  # fmt: skip
    s.run("first: sk-ant-SECRET-123456")
    s.run("second")
    return s, model


def test_our_transcript_keeps_the_real_clis_invariants_and_envelope(repo: Path, config_root: Path,
                                                                      layout: Layout) -> None:  # fmt: skip
    s, _ = _played(repo, layout)
    raw = s.transcript.path.read_text()
    assert faults(raw, s.options.session_id) == []
    assert "sk-ant-SECRET-123456" not in raw and "<redacted>" in raw
    found = read_entries(s.transcript.path)
    chained = [e for e in found if "uuid" in e]
    assert all(e.keys() >= ENVELOPE for e in chained)
    assert {e["gitBranch"] for e in chained} == {"feature/x"} and {e["entrypoint"] for e in chained} == {"sdk-cli"}
    first, answer_text, answer_bash = chained[0], chained[1], chained[2]
    assert first["parentUuid"] is None and first["message"] == {"role": "user", "content": "first: <redacted>"}
    assert first["permissionMode"] == "bypassPermissions"
    # stamped as Claude Code 2.1.332 stamps a prompt: when it was sent (epoch ms), and that it was written here
    assert (first["rowSource"], type(first["sentAtMs"])) == ("local", int)
    assert abs(first["sentAtMs"] - int(time.time() * 1000)) < 600_000
    # one API answer, one entry per block, one message id, each chained to the one before
    assert answer_text["message"]["id"] == answer_bash["message"]["id"]
    assert answer_bash["parentUuid"] == answer_text["uuid"] and answer_text["message"]["content"][0]["type"] == "text"
    results = [e for e in chained if isinstance(e["message"]["content"], list)
               and e["message"]["content"][0].get("type") == "tool_result"]  # fmt: skip
    assert len(results) == 3 and all(e["sourceToolAssistantUUID"] for e in results)
    assert results[2]["toolUseResult"].startswith("Error: ") and results[2]["message"]["content"][0]["is_error"]
    leaves = [e["leafUuid"] for e in found if e["type"] == "last-prompt"]
    assert len(leaves) == 2 and leaves[-1] == chained[-1]["uuid"]
    assert [e["lastPrompt"] for e in found if e["type"] == "last-prompt"] == ["first: <redacted>", "second"]
    assert os.stat(s.transcript.path).st_mode & 0o777 == 0o600


def test_a_subagents_prompt_is_marked_local_with_no_sent_time_as_claude_marks_it(tmp_path: Path) -> None:
    sub = Transcript(tmp_path / "agent-a1.jsonl", "s1", cwd=str(tmp_path), agent_id="a1", prompt_id="p1")
    sub.prompt("greeter", "say hi")  # claude 2.1.332: rowSource, no sentAtMs (test_interop_subagent_transcripts.py)
    [first] = read_entries(sub.path)
    assert (first["rowSource"], first["promptId"], "sentAtMs" in first) == ("local", "p1", False)


def test_reading_our_transcript_back_gives_the_conversation_we_had(repo: Path, config_root: Path,
                                                                    layout: Layout) -> None:  # fmt: skip
    s, _ = _played(repo, layout)
    loaded = load(s.transcript.path)
    want = json.loads(json.dumps(s.agent.messages).replace("sk-ant-SECRET-123456", "<redacted>"))
    assert loaded.messages == want
    assert loaded.session_id == s.options.session_id and loaded.leaf == s.transcript.leaf


def test_a_resumed_session_appends_to_its_file_and_sends_the_whole_conversation(repo: Path, config_root: Path,
                                                                                 layout: Layout) -> None:  # fmt: skip
    s, _ = _played(repo, layout)
    before = len(read_entries(s.transcript.path))
    model = FakeModel([[text("Resumed.")]])
    again = Session(SessionOptions(cwd=repo, resume=load(s.transcript.path)), model, layout=layout)
    assert again.options.session_id == s.options.session_id and again.transcript.path == s.transcript.path
    again.run("third")
    sent = model.requests[0].messages
    assert len(sent) == len(s.agent.messages) + 1 and "Second done." in json.dumps(sent[-2])
    after = read_entries(s.transcript.path)
    new = [e for e in after[before:] if "uuid" in e]
    assert new[0]["parentUuid"] == s.transcript.leaf  # chained onto the old leaf: one conversation
    assert faults(s.transcript.path.read_text(), s.options.session_id) == []


def test_a_fork_copies_the_conversation_under_a_new_id_and_leaves_the_original(repo: Path, config_root: Path,
                                                                               layout: Layout) -> None:  # fmt: skip
    s, _ = _played(repo, layout)
    original = s.transcript.path.read_bytes()
    model = FakeModel([[text("Forked.")]])
    forked = Session(SessionOptions(cwd=repo, resume=load(s.transcript.path), fork_session=True), model,
                     layout=layout)  # fmt: skip
    forked.run("on the fork")
    assert forked.options.session_id != s.options.session_id and s.transcript.path.read_bytes() == original
    copied = read_entries(forked.transcript.path)
    assert {e["sessionId"] for e in copied} == {forked.options.session_id}
    old_uuids = [e["uuid"] for e in read_entries(s.transcript.path) if "uuid" in e]
    assert [e["uuid"] for e in copied if "uuid" in e][: len(old_uuids)] == old_uuids
    assert all(e["requestSessionId"] == s.options.session_id for e in copied[: len(old_uuids)]
               if e["type"] == "assistant")  # fmt: skip
    assert len(model.requests[0].messages) == len(s.agent.messages) + 1
    with pytest.raises(FileExistsError):  # never over an existing session
        fork(load(s.transcript.path), forked.transcript.path, forked.options.session_id)


def test_an_always_answer_is_kept_for_the_resumed_session(repo: Path, config_root: Path, layout: Layout) -> None:
    model = FakeModel([[tool("Bash", command="touch made.txt")], [text("ok")]])
    s = Session(SessionOptions(cwd=repo, interactive=True), model, layout=layout, ask=lambda _a: "always")
    s.run("make it")
    assert (repo / "made.txt").exists()
    again = Session(SessionOptions(cwd=repo, interactive=True, resume=load(s.transcript.path)),
                    FakeModel([]), layout=layout)  # fmt: skip
    assert again.policy.decide("Bash", "execute", "touch other.txt").behavior == "allow"
    fresh = Session(SessionOptions(cwd=repo, interactive=True), FakeModel([]), layout=layout)
    assert fresh.policy.decide("Bash", "execute", "touch other.txt").behavior == "ask"


def test_a_torn_line_and_an_unanswered_tool_call_still_resume(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s.jsonl", "s", cwd=str(tmp_path))
    t.prompt("team-lead", "go")
    t.assistant("team-lead", [{"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "sleep 9"}}],
                AssistantMeta("msg_1", "claude-x", "tool_use", {}))  # fmt: skip
    with (tmp_path / "s.jsonl").open("a") as f:
        f.write('{"parentUuid": "x", "type": "us')  # the crash came mid-line
    messages = load(tmp_path / "s.jsonl").messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[2]["content"][0]["tool_use_id"] == "tu1" and messages[2]["content"][0]["is_error"] is True


def test_a_torn_line_costs_only_itself_for_continue_and_for_the_next_entry(
    tmp_path: Path, layout: Layout, ledger: FaultLedger
) -> None:
    """A crash left half a line: `-c` still finds the session (it said "no conversation found"), and the resumed
    session's next entry starts on a line of its own (it was glued onto the torn bytes and lost)."""
    cwd = tmp_path / "w"
    path = layout.transcript_file(cwd, "s")
    first = Transcript(path, "s", cwd=str(cwd))
    first.prompt("team-lead", "the first prompt")
    with path.open("a") as f:
        f.write('{"parentUuid": "x", "type": "us')  # the crash came mid-line
    info = newest(layout, cwd)
    assert info is not None and info.session_id == "s" and info.first_prompt == "the first prompt"
    resumed = Transcript(path, "s", cwd=str(cwd), leaf=first.leaf)
    resumed.prompt("team-lead", "after the crash")
    resumed.prompt("team-lead", "and once more")
    prompts = [e["message"]["content"] for e in read_entries(path) if e["type"] == "user"]
    ledger.faults, ledger.writes = 1, 3
    ledger.lost = len({"the first prompt", "after the crash", "and once more"} - set(prompts))
    assert prompts == ["the first prompt", "after the crash", "and once more"]


def test_sessions_of_a_cwd_newest_first_without_teammates(tmp_path: Path, layout: Layout) -> None:
    cwd = tmp_path / "w"
    for i, (sid, agent) in enumerate([("a", "team-lead"), ("b", "alice"), ("c", "team-lead")]):
        t = Transcript(layout.transcript_file(cwd, sid), sid, cwd=str(cwd))
        t.prompt(agent, f"prompt {sid}\nsecond line")
        os.utime(t.path, (time.time() - 100 + i, time.time() - 100 + i))
    found = sessions(layout, cwd)
    assert [s.session_id for s in found] == ["c", "a"]  # alice's is a teammate's
    assert found[0].first_prompt == "prompt c second line" and found[0].age().endswith("ago")
    latest = newest(layout, cwd)
    assert latest is not None and latest.session_id == "c"
    assert newest(layout, tmp_path / "elsewhere") is None


def test_the_branch_is_read_from_the_repository_or_is_head(tmp_path: Path) -> None:
    (tmp_path / "r" / ".git").mkdir(parents=True)
    (tmp_path / "r" / ".git" / "HEAD").write_text("0123abcd\n")
    assert git_branch(tmp_path / "r" / "sub") == "HEAD"  # detached
    (tmp_path / "r" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert git_branch(tmp_path / "r" / "sub") == "main"


def test_an_answer_cut_off_by_the_person_is_kept_for_the_resume(repo: Path, config_root: Path,
                                                                 layout: Layout) -> None:  # fmt: skip
    def stop_after_the_first_word(event: AgentEvent) -> None:
        if event.kind == "text":
            s.ctx.interrupt.set()  # as Ctrl-C while the answer streams

    model = FakeModel([[text("PARTIAL words of an answer")]])
    s = Session(SessionOptions(cwd=repo), model, layout=layout, on_event=stop_after_the_first_word)
    assert s.run("go").stop_reason == "interrupted"
    messages = load(s.transcript.path).messages
    assert "PARTIAL" in json.dumps(messages[1]) and "[Request interrupted by user]" in json.dumps(messages[2])
    assert messages == s.agent.messages
