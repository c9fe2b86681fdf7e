"""Interop tier: the real Claude Code, re-recorded offline on a short conversation (a Bash and a Read call, then `-c`),
still writes transcripts with the invariants and the shape of the golden files (so a version change shows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.store.paths import Layout, project_slug
from tests.support.repo import TESTS
from tests.support.transcript_checks import entries, faults
from tests.support.transcript_rec import SCENARIOS, Scenario, normalised, record

pytestmark = pytest.mark.timeout(120)

CORE = ("user", "assistant")  # the conversation entries a resuming CLI reads back


def short_conversation() -> Scenario:
    tools = next(s for s in SCENARIOS if s.name == "tools")
    cont = next(s for s in SCENARIOS if s.name == "continue")
    return Scenario("tools_then_continue", "tools, then -c", (*tools.steps, cont.steps[1]), (*tools.turns, "More."))


def shape(found: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per conversation entry type, the keys its entries carry (union), as a resuming reader meets them."""
    keys: dict[str, set[str]] = {}
    for e in found:
        if e["type"] in CORE:
            keys.setdefault(e["type"], set()).update(e)
    return {t: sorted(k) for t, k in sorted(keys.items())}


def test_a_re_recorded_conversation_keeps_the_golden_invariants(
    claude: Path, claude_version: str, tmp_path: Path
) -> None:
    rec = record(short_conversation(), claude_version, tmp_path / "run")
    assert [s["exit"] for s in rec.steps] == [0, 0], rec.steps
    [(rel, text)] = rec.files.items()
    sid = Path(rel).stem
    assert faults(text, sid) == []
    assert (
        rel.split("/")[1] == project_slug(str(rec.cwd)) == Layout(rec.config).transcript_file(rec.cwd, sid).parent.name
    )
    found = entries(text)
    prompts = [
        e["message"]["content"] for e in found if e["type"] == "user" and isinstance(e["message"]["content"], str)
    ]
    assert prompts == ["MARK run tools", "MARK again"]  # -c appended to the same file
    assert "MARK run tools" in json.dumps(rec.steps[1]["requests"][0]["messages"])  # and resent the first turn
    golden = TESTS / f"golden-{claude_version}" / "transcripts" / "tools" / "00000000-0000-4000-8000-000000000001.jsonl"
    _, files = normalised(rec, claude_version)
    [mine] = files.values()
    assert shape(entries(mine)) == shape(entries(golden.read_text("utf-8"))), (
        "the real CLI's conversation entries changed shape: re-record with scripts/record_transcripts.py "
        f"--version {claude_version} and update the README"
    )
