"""The invariants of a Claude Code session transcript (tests/golden-<version>/transcripts/README.md), as checks
that return every fault found, so that goldens and live recordings share them (the slug rule: store's
`project_slug`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CHAINED = {"user", "assistant", "attachment", "system"}  # the entry types on the uuid/parentUuid chain


def entries(text: str) -> list[dict[str, Any]]:
    """Every line of a transcript as a JSON object; ValueError naming the first line that is not one."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        entry = json.loads(line)
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise ValueError(f"line {i}: not an object with a string `type`: {line[:80]}")
        out.append(entry)
    return out


def faults(text: str, session_id: str) -> list[str]:
    """Every broken invariant of one session file (named `<session_id>.jsonl`); [] when it is sound."""
    try:
        found = entries(text)
    except ValueError as e:
        return [str(e)]
    problems = [f"line {i}: sessionId {e['sessionId']!r}" for i, e in enumerate(found, 1)
                if "sessionId" in e and e["sessionId"] != session_id]  # fmt: skip
    return problems + _chain_faults(found) + _tool_faults(found)


def _chain_faults(found: list[dict[str, Any]]) -> list[str]:
    seen: set[str] = set()
    every = {e.get("uuid") for e in found if e["type"] in CHAINED}
    problems = []
    for i, e in enumerate(found, 1):
        if e["type"] in CHAINED:
            if not isinstance(e.get("uuid"), str) or e["uuid"] in seen:
                problems.append(f"line {i}: uuid missing or repeated: {e.get('uuid')!r}")
            for key in ("parentUuid", "logicalParentUuid"):
                parent = e.get(key)
                if parent is not None and parent not in seen:
                    problems.append(f"line {i}: {key} {parent!r} is no earlier entry")
            if e.get("parentUuid") is None and not _may_be_root(e, seen):
                problems.append(f"line {i}: a {e['type']} with parentUuid null in mid-file")
            seen.add(e.get("uuid", ""))
        elif e["type"] == "last-prompt" and e.get("leafUuid") not in every:
            # 2.1.330 may write it just before the leaf it names (a prompt snapshot made earlier, appended later)
            problems.append(f"line {i}: last-prompt leafUuid {e.get('leafUuid')!r} is no entry of the file")
    return problems


def _may_be_root(e: dict[str, Any], seen: set[str]) -> bool:
    """The first chained entry, or a compaction boundary (which starts a new chain, the old leaf logically)."""
    return not seen or (e["type"] == "system" and e.get("subtype") == "compact_boundary")


def _tool_faults(found: list[dict[str, Any]]) -> list[str]:
    uses: dict[str, str] = {}  # tool_use id -> uuid of the assistant entry holding it
    problems = []
    for i, e in enumerate(found, 1):
        content = (e.get("message") or {}).get("content") if e["type"] in ("user", "assistant") else None
        for block in content if isinstance(content, list) else []:
            if e["type"] == "assistant" and block.get("type") == "tool_use":
                uses[block["id"]] = e["uuid"]
            elif e["type"] == "user" and block.get("type") == "tool_result":
                source = uses.get(block.get("tool_use_id", ""))
                if source is None:
                    problems.append(f"line {i}: tool_result for unknown tool_use {block.get('tool_use_id')!r}")
                elif e.get("sourceToolAssistantUUID") != source:
                    problems.append(f"line {i}: sourceToolAssistantUUID is not the tool_use's assistant entry")
                if "toolUseResult" not in e:
                    problems.append(f"line {i}: a tool_result entry without toolUseResult")
    return problems


def session_files(root: Path) -> list[Path]:
    """Every `<session-id>.jsonl` directly in a project directory below `root` (a config root or a golden dir)."""
    return sorted(p for p in root.rglob("*.jsonl") if p.parent.name != "subagents")
