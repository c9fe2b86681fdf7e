"""Interop tier, the TypeScript Agent SDK: a `query()` with `canUseTool` and a PreToolUse hook
(tests/support/ts_sdk_can_use_tool.mjs), run with node against the newest real `claude` and against ours, each with
its own scripted server: the same questions, hook calls, messages, result and files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support import ts_sdk
from tests.support.cli import Cli
from tests.support.sdk_programs import bash_turn, script

pytestmark = pytest.mark.timeout(600)


def _drive(cli: Path, home: Path, version: str) -> tuple[dict[str, object], list[str]]:
    work, config = home / "work", home / "cfg"
    work.mkdir(parents=True)
    rc.seed_home(config, [work], version)
    turns = script(bash_turn("touch one.txt", "toolu_1"), bash_turn("touch two.txt", "toolu_2"), "TS-DONE")
    with MockServer(turns) as server:
        env = {**rc.claude_env(config, server.base_url), "PYTHONPATH": str(rc.ROOT)}
        seen = ts_sdk.run("ts_sdk_can_use_tool.mjs", cli, work, env)
    return seen, sorted(p.name for p in work.iterdir() if not p.name.startswith("."))


@ccv.only(rc.NEWEST)
def test_a_typescript_query_with_can_use_tool_and_a_hook_sees_the_same(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path
) -> None:
    real = _drive(claude, tmp_path / "real", claude_version)
    ours = _drive(Path(cli.argv()[0]), tmp_path / "ours", claude_version)
    assert ours == real
    seen, files = ours
    assert seen["asked"] == [["Bash", "touch one.txt"], ["Bash", "touch two.txt"]] and files == ["changed.txt"]
    assert seen["hooked"] == ["touch one.txt", "touch two.txt"] and seen["result"] == "TS-DONE"
