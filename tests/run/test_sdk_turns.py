"""What a turn is, for a program driving ours with the real Agent SDK: the host's origin stamp echoed on its result,
waiting prompts joined only when their origins agree, `/clear` a new session (the same programs run against the
real CLI in the interop tier)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import sdk_programs as sdk
from tests.support import sdk_turn_programs as turns
from tests.support.cli import Cli
from tests.support.sdk_drive import ours

pytestmark = pytest.mark.timeout(120)


def drive(name: str, cli: Cli, config_root: Path, work: Path) -> dict[str, Any]:
    with ours(cli, config_root, work, turns.SCRIPTS[name]) as where:
        return sdk.run_program(turns.PROGRAMS[name], where)


def test_only_a_human_stamp_comes_back_on_the_turn_s_result(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("origin round trip", cli, config_root, work)
    assert seen == {"origins": [{"kind": "human"}, None, None, None]}  # its other keys dropped


def test_waiting_prompts_join_only_with_the_same_origin_kind(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("joined by origin", cli, config_root, work)
    assert seen["prompts"] == ["p0\np1", "p2\np3", "p4", "p5"]
    assert seen["origins"] == [None, None, {"kind": "human"}, None, None]


def test_clear_resets_the_conversation_under_a_new_session(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("/clear", cli, config_root, work)
    assert seen["resets"] == [(True, True, True)] and seen["reset_first"] == "ConversationResetMessage"
    assert seen["cleared"] == ("success", False, "", 0, 0) and seen["new_session"]
    assert seen["history"] == [True, False]  # the prompt after /clear went without the one before


def test_a_hook_callback_naming_another_event_ends_the_prompt_and_stops_the_call(
    cli: Cli, config_root: Path, work: Path
) -> None:
    seen = drive("a hook names another event", cli, config_root, work)
    prompt = seen["UserPromptSubmit"]  # an error result, and nothing before it: no init, nothing sent
    assert (prompt["kinds"], prompt["init"], prompt["ran"]) == (["ResultMessage", "ResultError"], False, False)
    assert prompt["results"] == [("error_during_execution", ["Hook returned incorrect event name"])]
    assert not seen["PreToolUse"]["ran"] and seen["PreToolUse"]["results"] == [("success", [])]
    assert seen["PostToolUse"]["ran"] and seen["PostToolUse"]["results"] == [("success", [])]
