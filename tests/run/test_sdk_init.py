"""An SDK program reads what ours says of its session as it reads the real CLI's (claude 2.1.332): the init message's
agents, slash commands, output style and plugins, and get_server_info's commands and agents, from the project's
files, its settings, a `--plugin-dir` plugin and the program's own agent types."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import sdk_init_programs as init
from tests.support import sdk_programs as sdk
from tests.support.cli import Cli
from tests.support.sdk_drive import ours

pytestmark = pytest.mark.timeout(120)


def drive(cli: Cli, config_root: Path, work: Path, sources: list[str] | None) -> dict[str, Any]:
    with ours(cli, config_root, work, sdk.script("ANSWER")) as where:
        return sdk.run_program(lambda w: init.what_the_session_says(w, sources), where)


def test_init_and_server_info_list_the_project_s_plugin_s_and_program_s_own(
    cli: Cli, config_root: Path, work: Path
) -> None:
    seen = drive(cli, config_root, work, None)
    assert seen["agents"] == ["Explore", "fs-agent", "general-purpose", "Plan", "prog-agent"]  # as claude sorts them
    assert seen["slash_commands"][:2] == ["commit", "demo-kit:greet"]
    assert seen["output_style"] == seen["info_style"] == "local-style"
    assert seen["plugins"] == [{"name": "demo-kit", "source": "demo-kit@inline", "version": "2.0.1"}]
    assert seen["info_commands"] == [
        {"name": "commit", "description": "Commit it (project)", "argumentHint": "msg"},
        {"name": "demo-kit:greet", "description": "(demo-kit) Greet them", "argumentHint": ""},
    ]
    prog = {"name": "prog-agent", "description": "From the program", "model": "sonnet"}
    assert seen["info_agents"] == [{"name": "fs-agent", "description": "From a file"}, prog]
    assert seen["keys"][:9] == ["type", "subtype", "cwd", "session_id", "tools", "mcp_servers", "model",
                                "permissionMode", "slash_commands"]  # fmt: skip


def test_user_only_setting_sources_leave_the_project_s_files_out(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive(cli, config_root, work, ["user"])
    assert "fs-agent" not in seen["agents"] and "prog-agent" in seen["agents"]
    assert "commit" not in seen["slash_commands"] and "demo-kit:greet" in seen["slash_commands"]
    assert seen["output_style"] == "default"
