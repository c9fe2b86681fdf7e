"""Interop: the real Claude Code's spawn tool, as it sends it to the model, names teammate worktrees as our `Task`
does (`isolation: "worktree"`): a lead written for the real CLI asks ours for a worktree in the same words."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from agentteams.tools.subagent import TaskTool
from tests.support import ccversions as ccv
from tests.support import realclaude as rc

pytestmark = pytest.mark.timeout(90)


@ccv.only(*ccv.SIGNING)
def test_the_real_spawn_tool_names_isolation_worktree_as_ours(
    claude: Path, claude_version: str, servers: list[MockServer], config_root: Path, tmp_path: Path
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    server = MockServer({"routes": [rc.main_route("main", "ISOMARK", ["ok"])]}, log_path=tmp_path / "r.jsonl")
    servers.append(server.start())
    rc.seed_home(config_root, [proj], claude_version)
    proc = subprocess.run([str(claude), "-p", "ISOMARK hi"], cwd=proj, env=rc.claude_env(config_root, server.base_url),
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    body = next(r["body"] for r in server.requests if r.get("route") == "main")
    spawn = next(t for t in body["tools"] if t["name"] in ("Agent", "Task"))
    theirs = spawn["input_schema"]["properties"]["isolation"]
    ours = TaskTool.input_schema["properties"]["isolation"]
    assert theirs["type"] == ours["type"] == "string"
    assert "worktree" in theirs["enum"] and set(ours["enum"]) <= set(theirs["enum"]), (theirs, ours)
    print(f"\n[interop] {claude_version} {spawn['name']}.isolation: {theirs['enum']}")
