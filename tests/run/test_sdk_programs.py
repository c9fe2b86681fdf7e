"""Programs written with the real Python Agent SDK drive ours (`cli_path` set to agentteams) against the scripted
server, each checked for what its author sees (the same programs run against the real CLI in the interop tier)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.mockapi import MockServer
from tests.support import sdk_programs as sdk
from tests.support import sdk_team_program as team
from tests.support.cli import Cli
from tests.support.procs import child_env
from tests.support.sdk_drive import ours

pytestmark = pytest.mark.timeout(120)


def drive(name: str, cli: Cli, config_root: Path, work: Path) -> sdk.Seen:
    with ours(cli, config_root, work, sdk.script_for(name, work)) as where:
        return sdk.run(name, where)


def test_a_one_shot_query_gets_init_the_answer_and_a_result_the_sdk_parses(
    cli: Cli, config_root: Path, work: Path
) -> None:
    seen = drive("one-shot query", cli, config_root, work)
    assert seen.kinds == ["SystemMessage", "AssistantMessage", "ResultMessage"]
    assert seen.results == [{"subtype": "success", "is_error": False, "result": "HELLO-FROM-MODEL", "num_turns": 1,
                             "api_ms_is_int": True}]  # fmt: skip


def test_can_use_tool_is_asked_and_its_new_input_runs(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("can_use_tool allows with new input", cli, config_root, work)
    assert seen.asked == [("Bash", {"command": "touch hi.txt", "description": "run"})]
    assert seen.files == ["changed.txt"]  # the program's input ran, not the model's
    assert seen.results[-1]["result"] == "DONE"


def test_a_deny_from_can_use_tool_runs_nothing_and_tells_the_model(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("can_use_tool denies", cli, config_root, work)
    assert [tool for tool, _ in seen.asked] == ["Bash"] and seen.files == []
    assert any("DENIED-BY-PROGRAM" in text for text in seen.tool_results)


def test_a_hook_registered_by_initialize_is_called_back_and_its_deny_holds(
    cli: Cli, config_root: Path, work: Path
) -> None:
    seen = drive("a PreToolUse hook denies", cli, config_root, work)
    assert seen.hooks == [("PreToolUse", "Bash")] and seen.files == []  # even in bypassPermissions
    assert any("HOOK-SAID-NO" in text for text in seen.tool_results)


def test_a_client_keeps_one_conversation_over_two_queries(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("two turns with a client", cli, config_root, work)
    assert [r["result"] for r in seen.results] == ["ANSWER-ONE", "ANSWER-TWO"]


def test_partial_messages_stream_the_api_s_events(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("partial messages", cli, config_root, work)
    assert seen.streamed == "STREAMED-IN-PIECES" and seen.results[-1]["result"] == "STREAMED-IN-PIECES"
    assert {"message_start", "content_block_delta", "message_stop"} <= seen.stream_types
    # the block's assistant line at its end, before that event's own line, as claude writes them
    assert seen.order == ["message_start", "content_block_start", "content_block_delta", "assistant",
                          "content_block_stop", "message_delta", "message_stop"], seen.order  # fmt: skip


def test_max_turns_ends_in_its_error_result(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("max turns", cli, config_root, work)
    assert seen.results[-1]["subtype"] == "error_max_turns" and seen.results[-1]["is_error"] is True
    assert seen.results[-1]["errors"] == ["Reached maximum number of turns (1)"] and seen.raised == "ResultError"


def test_an_api_error_is_an_error_result_with_its_status(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("an API error", cli, config_root, work)
    assert seen.results == [{"subtype": "success", "is_error": True, "result": None, "num_turns": 1,
                             "api_ms_is_int": True, "errors": None, "api_error_status": 400}]  # fmt: skip
    assert seen.raised == "ResultError"


def test_a_client_sets_the_mode_and_the_model_mid_session(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("mode and model set by a client", cli, config_root, work)
    assert seen.files == ["notes.txt"] and [r["result"] for r in seen.results] == ["WROTE-IT", "ON-HAIKU"]
    assert seen.models[-1] == "claude-haiku-4-5" and seen.models[0] != "claude-haiku-4-5"


def test_an_allow_that_keeps_a_rule_saves_it_and_is_not_asked_again(cli: Cli, config_root: Path, work: Path) -> None:
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.local.json").write_text('{"env": {"KEPT": "1"}, "permissions": {"allow": ["Read"]}}')
    seen = drive("can_use_tool saves a rule", cli, config_root, work)
    assert len(seen.asked) == 1 and seen.files == ["a.txt"]
    assert seen.saved == ["Read", "Bash(touch a.txt)"]
    assert json.loads((work / ".claude" / "settings.local.json").read_text())["env"] == {"KEPT": "1"}


def test_the_program_s_own_mcp_server_is_offered_and_called_through_it(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("an in-process SDK MCP server", cli, config_root, work)
    assert seen.hooks == [("add", '{"a": 2, "b": 3}')]  # the tool ran in the program's process
    assert json.loads(seen.tool_results[0]) == [{"type": "text", "text": "SUM=5"}]  # its blocks, as claude sends them
    assert seen.results[-1]["result"] == "ADDED"


def test_agent_types_defined_by_the_program_are_listed(cli: Cli, config_root: Path, work: Path) -> None:
    assert drive("agents defined by the program", cli, config_root, work).agents == ["reviewer"]


def test_a_team_of_two_behind_the_program_asks_it_for_one_teammate_and_ends_with_the_team(
    cli: Cli, config_root: Path, work: Path
) -> None:
    with MockServer(team.team_script()) as server:
        env = {**child_env(config_root), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-t"}
        seen = sdk.run_program(team.a_team_behind_the_program, sdk.Where(Path(cli.argv()[0]), env, work, server))
    # one question, from bob, with bob's agent id: the program allowed it by that id (anyone else it denies)
    assert seen.asked == [("Bash by bob@crew", {"command": "touch bob.txt", "description": "touch"})], seen
    assert seen.files == ["alice.txt", "bob.txt"] and seen.results[-1]["result"] == "TEAM-DONE", seen
    # one result, the last message, once both teammates' work was done and the team deleted
    assert [k for k in seen.kinds if k == "ResultMessage"] == ["ResultMessage"] and seen.kinds[-1] == "ResultMessage"
    assert seen.files_at_result == ["alice.txt", "bob.txt"] and seen.team_at_result is False
    assert seen.texts[-1] == "TEAM-DONE" and not (config_root / "teams" / "crew").exists()


def test_tools_limits_the_built_in_tools_offered(cli: Cli, config_root: Path, work: Path) -> None:
    assert sorted(drive("only some built-in tools", cli, config_root, work).offered) == ["Glob", "Read"]


def test_setting_sources_leaves_the_project_s_settings_unread(cli: Cli, config_root: Path, work: Path) -> None:
    assert drive("project settings left out", cli, config_root, work).files == ["ran.txt"]


def test_a_subagent_s_lifecycle_prompt_and_forwarded_text_are_attributed_to_its_call(
    cli: Cli, config_root: Path, work: Path
) -> None:
    seen = drive("a subagent forwarded", cli, config_root, work)
    assert seen.kinds[:5] == ["SystemMessage", "AssistantMessage", "TaskStartedMessage", "TaskUpdatedMessage",
                              "TaskNotificationMessage"], seen  # fmt: skip
    assert seen.attributed == ["UserMessage:TextBlock", "AssistantMessage:TextBlock"]  # its prompt, its text
    assert seen.results[-1]["result"] == "DONE" and seen.tool_results == ["HI-FROM-SUB"]


def test_file_checkpoints_rewind_a_prompt_s_file_changes_but_not_a_command_s(
    cli: Cli, config_root: Path, work: Path
) -> None:
    seen = drive("file checkpoints rewound", cli, config_root, work)
    assert seen.rewound == [
        {"canRewind": True, "filesChanged": ["/new.txt", "/sub/made.txt"], "insertions": 0, "deletions": 3},
        {"canRewind": False, "error": "No file checkpoint found for this message."},
        {"b.txt": "x\n", "keep.txt": "orig\nsecond\n"},  # the command's file stays, as claude leaves it
    ]
