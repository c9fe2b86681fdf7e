"""Claude Code 2.1.332's newer options of the agent command, read and checked (run/more_flags.py), their values left
out as claude's optional values may be, and the debug log's category filter (run/debug_log.py)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agentteams import diagnostics
from agentteams.cli import root_argv
from agentteams.errors import AgentTeamsError
from agentteams.run import debug_log
from agentteams.run.agent import flags_from_options
from agentteams.run.more_flags import Mode, MoreFlags, check, settings_for, window
from agentteams.run.session_choice import optional_value

PRINT = Mode(True, "text", "text")
STREAM = Mode(True, "stream-json", "stream-json")


def more_of(*argv: str) -> MoreFlags:
    given = root_argv.parse(optional_value(list(argv)))
    assert given is not None, argv
    return flags_from_options(given).more


def test_options_of_an_optional_value_take_the_next_word_unless_it_is_an_option() -> None:
    assert more_of("-d", "-p", "hi").debug == ""
    assert more_of("--debug", "hooks,mcp", "-p", "hi").debug == "hooks,mcp"
    assert more_of("--debug=!api", "-p", "hi").debug == "!api"
    assert more_of("-w", "-p", "hi").worktree == ""
    assert more_of("-p", "hi", "-w").worktree == ""
    assert more_of("-w", "feat", "-p", "hi").worktree == "feat"
    tmux = more_of("--tmux", "hi", "-w")  # --tmux takes a value only attached: "hi" is the prompt
    assert (tmux.tmux, tmux.worktree) == ("", "")
    assert more_of("--tmux=classic", "-w").tmux == "classic"
    assert more_of("-n", "my name", "-p", "hi").name == "my name"
    assert more_of("--bg", "hi").background and more_of("--background", "hi").background


@pytest.mark.parametrize(
    ("argv", "mode", "said"),
    [
        (("--bg",), PRINT, "--bg cannot go with --print"),
        (("--cloud",), PRINT, "--cloud"),
        (("--teleport", "abc"), PRINT, "--teleport"),
        (("--environment", "ccpool_x"), PRINT, "--environment"),
        (("--desktop",), PRINT, "--desktop"),
        (("--file", "file_a:doc.txt"), PRINT, "--file"),
        (("--tmux",), PRINT, "--tmux requires --worktree"),
        (("--permission-prompts", "bogus"), PRINT, "host or none"),
        (("--system-prompt-snapshot", "bogus"), PRINT, "on or off"),
        (("--prompt-suggestions",), PRINT, "requires --print and --output-format=stream-json"),
        (("--replay-user-messages",), PRINT, "requires both --input-format=stream-json"),
        (("--no-session-persistence",), Mode(False, "text", "text"), "only works with --print"),
        (("--autocompact", "5000"), PRINT, "at least 100k"),
    ],
)
def test_claudes_refusals_are_one_line_each(argv: tuple[str, ...], mode: Mode, said: str) -> None:
    with pytest.raises(AgentTeamsError, match=said):
        check(more_of(*argv, "-p", "hi"), mode)


def test_what_claude_accepts_passes() -> None:
    for argv, mode in ((("--prompt-suggestions",), STREAM), (("--replay-user-messages",), STREAM),
                       (("--prompt-suggestions", "false"), PRINT), (("--autocompact", "auto"), PRINT),
                       (("-w", "--tmux"), PRINT), (("--permission-prompts", "none"), PRINT)):  # fmt: skip
        check(more_of(*argv, "-p", "hi"), mode)


def test_the_autocompact_window_reads_as_claude_reads_it() -> None:
    assert (window("auto"), window("200000"), window("500k"), window("200")) == (None, 200_000, 500_000, 200_000)
    assert window("1e6") == 1_000_000
    for refused in ("99k", "nan", "inf", "1e400", "nank"):  # one line each, as claude's; not a crash
        with pytest.raises(AgentTeamsError, match="at least 100k"):
            window(refused)


def test_the_debug_filter_keeps_or_drops_categories() -> None:
    keep = debug_log.parse_filter("hooks,api")
    assert keep.keeps("Hooks: running 1 hook(s) for Stop") and keep.keeps("API: request to x, attempt 1")
    assert not keep.keeps("Settings: read user")
    drop = debug_log.parse_filter("!hooks")
    assert not drop.keeps("Hooks: running 1 hook(s)") and drop.keeps("API: request")
    assert debug_log.parse_filter("hooks,!api").keeps("anything at all")  # a mix is no filter, as claude's
    assert debug_log.categories('MCP server "files": connected') >= {"mcp", "files"}
    assert "init" in debug_log.categories("[init] configure")


def test_the_debug_log_is_private_to_the_user(tmp_path: Path) -> None:
    """It holds prompts and tool output: 0600 (its directory 0700) whatever the umask, as the store's files."""
    old = os.umask(0o022)
    try:
        default = debug_log.start(None, None, False, "sid", tmp_path / "root")
        named = debug_log.start(None, str(tmp_path / "named.log"), False, "sid", tmp_path / "root")
    finally:
        os.umask(old)
        diagnostics.set_debug(None)
    assert default is not None and named is not None
    assert stat.S_IMODE(default.stat().st_mode) == 0o600 and stat.S_IMODE(named.stat().st_mode) == 0o600
    assert stat.S_IMODE(default.parent.stat().st_mode) == 0o700


def test_bare_and_safe_mode_keep_the_managed_files_hooks_only(tmp_path: Path) -> None:
    from agentteams.agent.hooks.spec import configured
    from agentteams.settings.load import load_settings

    def group(command: str) -> dict[str, Any]:
        return {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}

    policy, mine = group("/opt/policy-check"), group("./my-hook")
    root, cwd, managed = tmp_path / "root", tmp_path / "proj", tmp_path / "managed-settings.json"
    root.mkdir()
    cwd.mkdir()
    # the user's file holds its own hook and a copy of the policy's: the copy must not take the policy's away
    (root / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [mine, policy], "Stop": [mine]}}))
    managed.write_text(json.dumps({"hooks": {"PreToolUse": [policy]}}))
    found = load_settings(cwd, root=root, managed=managed)
    assert found.hooks["PreToolUse"] == [mine, policy]
    for more in (MoreFlags(bare=True), MoreFlags(safe_mode=True)):
        kept = settings_for(more, found)
        assert kept.hooks == {"PreToolUse": [policy]} == kept.merged["hooks"]
        [hook], _ = configured(kept)
        assert (hook.command, hook.source) == ("/opt/policy-check", str(managed))
