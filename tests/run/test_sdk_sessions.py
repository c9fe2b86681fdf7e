"""Agent SDK programs that keep and reopen sessions (tests/support/sdk_session_programs.py) drive ours: a truncating
resume at a streamed message's uuid, and a session store fed by `--session-mirror` and resumed from alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import sdk_programs as sdk
from tests.support import sdk_session_programs as sessions
from tests.support.cli import Cli
from tests.support.sdk_drive import ours

pytestmark = pytest.mark.timeout(180)


def drive(name: str, cli: Cli, config_root: Path, work: Path) -> dict[str, Any]:
    with ours(cli, config_root, work, sessions.SCRIPTS[name]) as where:
        return sdk.run_program(sessions.PROGRAMS[name], where)


def test_a_resume_cut_at_a_streamed_uuid_forks_without_the_later_turn(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("truncating resume", cli, config_root, work)
    assert seen["streamed_are_the_transcript_s"], seen  # the uuids the program saw name the transcript's entries
    assert seen["wrong_turn"] == "Resume rejected by --resume-drops-turn (turn 2 named)", seen
    assert seen["unknown_at"] == "No message found with message.uuid of: <uuid> (exit code: 1)", seen
    assert seen["forked"] == [False] and seen["new_id"], seen
    assert seen["forked_prompts"] == [sessions.PROMPTS[0], sessions.PROMPTS[2]], seen
    assert seen["source_prompts"] == list(sessions.PROMPTS[:2]), seen  # the source untouched
    assert seen["told"] == [sessions.PROMPTS[0], sessions.PROMPTS[2], "ONE"], seen


def test_a_session_store_gets_the_transcript_and_resumes_from_it_alone(cli: Cli, config_root: Path, work: Path) -> None:
    seen = drive("session store", cli, config_root, work)
    assert seen == {"mirrored_the_transcript": True, "streamed_in_store": True, "resumed_same_session": True,
                    "resumed_ok": True, "told": [sessions.PROMPTS[0], sessions.PROMPTS[1], "ONE"]}  # fmt: skip
