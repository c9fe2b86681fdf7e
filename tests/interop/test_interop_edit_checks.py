"""Interop tier, what claude 2.1.332 checks in an Edit before it asks (issue 29's leftovers): a missing file, the same
text, a string not found or found twice, a new file over an existing one, a directory, a notebook are the model's
errors (no PreToolUse hook runs, no permission denial); what passes them is refused in -p as a denial. Both CLIs on
the same answers: the same calls listed as refused, the same calls failed, the same num_turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import tool
from tests.support.script_runs import both, spec, text


def _edit(path: Path, old: str, new: str) -> dict[str, Any]:
    return tool("Edit", file_path=str(path), old_string=old, new_string=new)


@ccv.only(rc.NEWEST)
def test_an_edit_claude_validates_fails_before_hooks_and_permission(claude: Path, cli: Cli, tmp_path: Path,
                                                                    proj: Path,
                                                                    servers: list[MockServer]) -> None:  # fmt: skip
    (proj / "x.txt").write_text("old aa aa\n")
    (proj / "y.txt").write_text("yy\n")
    (proj / "sub").mkdir()
    marker = tmp_path / "hook-ran"
    (proj / ".claude").mkdir()
    hook = {"type": "command", "command": f"echo Edit >> {marker}"}
    (proj / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Edit|NotebookEdit", "hooks": [hook]}]}}))  # fmt: skip
    calls = [
        _edit(proj / "missing.txt", "a", "b"), _edit(proj / "x.txt", "old", "new"),  # the second: a denial
        tool("Read", file_path=str(proj / "x.txt")), _edit(proj / "x.txt", "zzz", "b"),
        _edit(proj / "x.txt", "old", "old"), _edit(proj / "x.txt", "aa", "bb"), _edit(proj / "new.txt", "", "hi"),
        _edit(proj / "y.txt", "", "hi"), _edit(proj / "sub", "a", "b"), _edit(proj / "nb.ipynb", "a", "b"),
        tool("NotebookEdit", notebook_path=str(proj / "nb2.ipynb"), new_source="x", cell_id="c1"),
    ]  # fmt: skip
    script = spec({"content": calls[:2]}, *({"content": [c]} for c in calls[2:]), text("DONE"))
    found = {}
    for which, proc, server in both(claude, cli, tmp_path, proj, servers, script, "-p", "go", "--output-format",
                                    "json"):  # fmt: skip
        assert proc.returncode == 0, (which, proc.stderr)
        result = json.loads(proc.stdout)
        results = [b for r in server.requests if isinstance(r["body"], dict) and r["body"].get("tools")
                   for m in r["body"]["messages"] if isinstance(m["content"], list)
                   for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip
        failed = sorted({b["tool_use_id"] for b in results if b.get("is_error")})
        refused = [(d["tool_name"], d["tool_input"].get("file_path")) for d in result["permission_denials"]]
        hooked = marker.read_text().count("Edit") if marker.exists() else 0
        marker.unlink(missing_ok=True)
        found[which] = (result["num_turns"], refused, failed, hooked)
    assert found["ours"] == found["claude"], found
    assert found["ours"][1] == [("Edit", str(proj / "x.txt")), ("Edit", str(proj / "new.txt"))]
