"""An SDK program's control requests beyond the turn itself, against ours and the scripted server: MCP servers
switched off and on, reconnected, set by the program; the context's usage; a background command stopped; file
rewinding refused as Claude Code refuses it without checkpoints (the same programs run against claude in interop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import sdk_control_programs as controls
from tests.support import sdk_programs as sdk
from tests.support.cli import Cli
from tests.support.sdk_drive import ours

pytestmark = pytest.mark.timeout(120)


def drive(name: str, cli: Cli, config_root: Path, work: Path) -> tuple[dict[str, Any], MockServer]:
    with ours(cli, config_root, work, controls.SCRIPTS[name]) as where:
        return sdk.run_program(controls.PROGRAMS[name], where), where.server


def test_mcp_servers_switched_off_on_and_set_change_the_tools_offered(cli: Cli, config_root: Path, work: Path) -> None:
    seen, server = drive("MCP servers switched, set and reconnected", cli, config_root, work)
    assert seen["off"] == [("one", "disabled")] and seen["offered_off"] == []
    assert seen["reconnect_off"].startswith("MCP server one is disabled") and seen["reconnect_on"] == ""
    assert seen["set"] == {"added": ["two"], "removed": [], "errors": {}}
    assert seen["both"] == [("one", "connected"), ("two", "connected")]
    assert seen["offered_both"] == [f"mcp__{s}__{t}" for s in ("one", "two") for t in ("die", "echo", "write")]
    assert seen["unset"]["removed"] == ["two"] and seen["after"] == [("one", "connected")]
    assert seen["unknown"] == "Server not found: nope"
    offered = [sorted(t["name"] for t in r["body"]["tools"] if t["name"].startswith("mcp__"))
               for r in server.requests if r.get("route") == "main"]  # fmt: skip
    assert offered == [[], seen["offered_both"]]  # what the model was offered, turn by turn


def test_the_context_s_usage_adds_up_to_the_window_and_grows_with_a_turn(
    cli: Cli, config_root: Path, work: Path
) -> None:
    seen, _ = drive("the context's usage", cli, config_root, work)
    for usage in (seen["before"], seen["after"]):
        assert usage["total_is_used"] and usage["adds_up"] and usage["threshold_below_max"], usage
        assert usage["grid"] == [10, 20] and "messages" in usage["ids"]
    assert seen["grew"] and seen["messages_grew"] and seen["api_usage"] == [True, True]


def test_a_stopped_background_command_is_killed_and_said_so(cli: Cli, config_root: Path, work: Path) -> None:
    seen, _ = drive("a background command stopped", cli, config_root, work)
    assert seen["started"] == [("local_bash", "sleep then touch", "toolu_bg")]
    assert seen["heard"] == [("updated", "killed"), ("notification", "stopped")]
    assert seen["files"] == [] and seen["unknown"] == ""  # it never got to touch its file


def test_rewinding_files_is_refused_as_claude_refuses_it_without_checkpoints(
    cli: Cli, config_root: Path, work: Path
) -> None:
    seen, _ = drive("files rewound without checkpoints", cli, config_root, work)
    assert seen == {"rewind": "File rewinding is not enabled."}
