"""The real Claude Code's transcripts (tests/golden-<version>/transcripts, recorded by scripts/record_transcripts.py)
keep the invariants their README documents: JSON lines, an unbroken uuid/parentUuid chain, tool results linked to
their tool uses, the cwd slug rule, and what -c, --resume, --fork-session, --session-id and /compact do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.store.paths import Layout, project_slug
from tests.support.repo import TESTS
from tests.support.transcript_checks import entries, faults, session_files

VERSIONS = ("2.1.197", "2.1.330", "2.1.332")
SCENARIOS = ("plain", "tools", "tool_error", "two_turns", "continue", "resume", "fork", "session_id", "compact",
             "auto_compact", "long_cwd")  # fmt: skip


def golden(version: str) -> Path:
    return TESTS / f"golden-{version}" / "transcripts"


def manifest(version: str, scenario: str) -> dict[str, Any]:
    data = json.loads((golden(version) / scenario / "manifest.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def session(version: str, scenario: str, n: int = 1) -> list[dict[str, Any]]:
    """The entries of the n-th session a scenario made (sessions are numbered in the order they were made)."""
    return entries((golden(version) / scenario / f"00000000-0000-4000-8000-{n:012d}.jsonl").read_text("utf-8"))


def conversation(found: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(e["type"], e["message"]["content"]) for e in found if e["type"] in ("user", "assistant")]


def all_files() -> list[tuple[str, Path]]:
    found = [(v, p) for v in VERSIONS for p in session_files(golden(v))]
    assert len(found) >= 2 * len(SCENARIOS), "golden transcripts missing: run scripts/record_transcripts.py"
    return found


@pytest.mark.parametrize(("version", "path"), all_files(), ids=lambda x: x if isinstance(x, str) else x.parent.name)
def test_every_golden_transcript_keeps_the_invariants(version: str, path: Path) -> None:
    assert faults(path.read_text(encoding="utf-8"), path.stem) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_every_scenario_is_recorded_and_every_step_succeeded(version: str) -> None:
    for scenario in SCENARIOS:
        data = manifest(version, scenario)
        assert data["version"] == version and data["scenario"] == scenario
        assert [s["exit"] for s in data["steps"]] == [0] * len(data["steps"]), scenario
        assert all((golden(version) / scenario / name).is_file() for name in data["files"])


def test_the_invariant_checks_can_fail() -> None:
    good = (golden("2.1.330") / "tools" / "00000000-0000-4000-8000-000000000001.jsonl").read_text("utf-8")
    sid = "00000000-0000-4000-8000-000000000001"
    assert faults(good, sid) == []
    lines = good.splitlines()
    results = [i for i, line in enumerate(lines) if '"tool_result"' in line and '"type": "user"' in line]
    broken_link = [*lines]
    broken_link[results[0]] = broken_link[results[0]].replace('"toolu_mock_', '"toolu_gone_')
    assert any("unknown tool_use" in f for f in faults("\n".join(broken_link), sid))
    chained = [i for i, line in enumerate(lines) if '"parentUuid": "' in line]
    assert faults("\n".join(lines[: chained[0]] + lines[chained[0] + 1 :]), sid)  # an entry cut from the chain
    assert faults(good, "another-session")
    assert faults(good + "not json\n", sid)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_slug_rule_is_the_clis_and_ours_for_short_cwds(version: str) -> None:
    for scenario in SCENARIOS:
        data = manifest(version, scenario)
        assert data["slug_dirs"] == [project_slug(data["cwd"])], scenario
        if scenario != "long_cwd":
            assert Layout(Path("/cfg")).transcript_file(data["cwd"], "s").parent.name == data["slug_dirs"][0]


def test_our_slug_for_a_long_cwd_is_the_clis() -> None:
    data = manifest("2.1.330", "long_cwd")
    assert Layout(Path("/cfg")).transcript_file(data["cwd"], "s").parent.name == data["slug_dirs"][0]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_tool_result_entry_carries_the_tools_structured_result(version: str) -> None:
    results = [e for e in session(version, "tools") if e["type"] == "user" and "toolUseResult" in e]
    bash, read = results[0]["toolUseResult"], results[1]["toolUseResult"]
    assert bash["stdout"] == "hi" and bash["interrupted"] is False
    assert read["type"] == "text" and read["file"]["content"] == "hello notes\n"
    errors = [b for e in session(version, "tool_error") if e["type"] == "user" for b in e["message"]["content"]
              if isinstance(b, dict) and b.get("type") == "tool_result"]  # fmt: skip
    assert [b.get("is_error") for b in errors] == [True, True, True]
    assert "timed out" in errors[2]["content"]  # a Bash timeout is an error result, not `interrupted`


@pytest.mark.parametrize(("version", "scenario", "flag"), [(v, s, f) for v in VERSIONS for s, f in
                         (("continue", "-c"), ("resume", "--resume"))])  # fmt: skip
def test_continue_and_resume_append_to_the_same_session_and_resend_it(version: str, scenario: str, flag: str) -> None:
    data = manifest(version, scenario)
    last = data["steps"][-1]
    assert flag in last["argv"]
    first_file = next(iter(data["files"].values()))
    assert [f for f in last["new_or_grown_files"] if f.startswith("projects/")] == [first_file]
    sent = json.dumps(last["requests"][0]["messages"])
    first_prompt = conversation(session(version, scenario))[0][1]
    assert first_prompt in sent and first_prompt in json.dumps(data["steps"][0]["requests"][0]["messages"])
    ids = {e["sessionId"] for e in session(version, scenario) if "sessionId" in e}
    assert ids == {"00000000-0000-4000-8000-000000000001"}  # no new session id


@pytest.mark.parametrize("version", VERSIONS)
def test_fork_copies_the_conversation_into_a_new_session_and_leaves_the_original(version: str) -> None:
    data = manifest(version, "fork")
    fork_step = data["steps"][1]
    assert "--fork-session" in fork_step["argv"]
    assert [f for f in fork_step["new_or_grown_files"] if f.startswith("projects/")] == [data["files"][
        "00000000-0000-4000-8000-000000000002.jsonl"]]  # fmt: skip
    original, fork = session(version, "fork", 1), session(version, "fork", 2)
    copied = [e["uuid"] for e in original if e["type"] in ("user", "assistant")]
    assert [e["uuid"] for e in fork if e["type"] in ("user", "assistant")][: len(copied)] == copied  # same uuids
    assert {e["sessionId"] for e in fork if "sessionId" in e} == {"00000000-0000-4000-8000-000000000002"}


@pytest.mark.parametrize("version", VERSIONS)
def test_session_id_names_the_file_and_every_entry(version: str) -> None:
    data = manifest(version, "session_id")
    wanted = data["steps"][0]["argv"][data["steps"][0]["argv"].index("--session-id") + 1]
    assert list(data["files"]) == [f"{wanted}.jsonl"]
    found = entries((golden(version) / "session_id" / f"{wanted}.jsonl").read_text("utf-8"))
    assert {e["sessionId"] for e in found if "sessionId" in e} == {wanted}


@pytest.mark.parametrize("version", VERSIONS)
def test_compact_writes_a_boundary_and_a_summary_that_the_next_request_carries(version: str) -> None:
    found = session(version, "compact")
    [boundary] = [e for e in found if e.get("subtype") == "compact_boundary"]
    assert boundary["type"] == "system" and boundary["parentUuid"] is None
    assert boundary["compactMetadata"]["trigger"] == "manual" and boundary["logicalParentUuid"]
    after = found[found.index(boundary) + 1]
    assert after["type"] == "user" and after["isCompactSummary"] is True and after["parentUuid"] == boundary["uuid"]
    assert "MOCKSUMMARY" in after["message"]["content"]
    last = manifest(version, "compact")["steps"][-1]["requests"][-1]["messages"]
    assert "MOCKSUMMARY" in json.dumps(last) and "Before answer." not in json.dumps(last)  # the summary, not the turns


@pytest.mark.parametrize("version", VERSIONS)
def test_one_api_message_is_one_entry_per_block_and_one_message_again_in_the_next_request(version: str) -> None:
    replies = [e for e in session(version, "tools") if e["type"] == "assistant"]
    text, use = replies[0], replies[1]  # "Running." and the Bash tool_use came in one API message
    assert text["message"]["id"] == use["message"]["id"] and use["parentUuid"] == text["uuid"]
    assert [len(e["message"]["content"]) for e in replies] == [1] * len(replies)
    assert text["message"]["stop_reason"] == "tool_use"  # each part carries the whole message's final fields
    second = manifest(version, "tools")["steps"][0]["requests"][1]["messages"]
    joined = [m for m in second if m["role"] == "assistant"]
    assert [b["type"] for b in joined[0]["content"]] == ["text", "tool_use"]


def test_automatic_compaction_summarises_the_pending_prompt_too() -> None:
    """2.1.330, told by a response's usage that the context is past its window, compacts before the next request
    (2.1.197 did not, offline in -p: its golden shows the summary turn answered as a plain one)."""
    found = session("2.1.330", "auto_compact")
    [boundary] = [e for e in found if e.get("subtype") == "compact_boundary"]
    assert boundary["compactMetadata"]["trigger"] == "auto" and boundary["compactMetadata"]["preTokens"] > 990000
    [summary] = [e for e in found if e.get("isCompactSummary")]
    assert "MOCKSUMMARY auto" in summary["message"]["content"] and summary["summarizedTurnPromptUuids"]
    last = json.dumps(manifest("2.1.330", "auto_compact")["steps"][-1]["requests"][-1]["messages"])
    assert "MOCKSUMMARY auto" in last and "Big answer." not in last
    assert not any(e.get("subtype") == "compact_boundary" for e in session("2.1.197", "auto_compact"))


def test_2_1_332_stamps_each_prompt_with_when_and_where_it_was_sent() -> None:
    found = session("2.1.332", "tools")
    prompts = [e for e in found if e["type"] == "user" and isinstance(e["message"]["content"], str)]
    assert prompts and all((e["sentAtMs"], e["rowSource"]) == (0, "local") for e in prompts)  # 0: normalised
    keys = list(prompts[0])
    assert keys[keys.index("permissionMode") :][:4] == ["permissionMode", "promptSource", "sentAtMs", "rowSource"]
    assert not any("sentAtMs" in e for e in session("2.1.330", "tools"))
