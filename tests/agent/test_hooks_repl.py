"""Hooks in the interactive REPL (tmux): a Notification hook hears that the lead waits for the person's permission
answer, and a prompt a UserPromptSubmit hook blocks is shown as dropped and never reaches the model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.hooks import check_payload
from tests.support.hookscript import HookLab
from tests.support.lead_pane import QUESTION, START, lead_route, model_calls, tool_turn
from tests.support.wait import wait_until


def test_notification_and_a_blocked_prompt_in_the_repl(start_lead: Callable[..., Any], tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    lab = HookLab(tmp_path / "lab")
    hooks = lab.settings({"Notification": "permission_prompt", "UserPromptSubmit": ""})
    (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    lab.answer({"event": "UserPromptSubmit", "when": "FORBIDDEN", "stderr": "NO-FORBIDDEN-PROMPTS", "exit": 2})
    script = {"routes": [lead_route(tool_turn("Write", file_path=str(work / "yes.txt"), content="yes"), "DONE")]}
    pane, server, _ = start_lead(script, "write yes.txt")
    pane.wait(lambda s: QUESTION in s, "the permission question", timeout=START)
    wait_until(lambda: bool(lab.entries("Notification")), 10, "the Notification hook")
    [notified] = lab.entries("Notification")
    payload = check_payload(notified, work)
    assert (payload["message"], payload["notification_type"]) == (
        "Claude needs your permission to use Write", "permission_prompt")  # fmt: skip
    pane.submit("1")
    pane.wait_text("⏺ DONE")
    pane.idle()
    calls = len(model_calls(server))
    pane.submit("do the FORBIDDEN thing")
    pane.wait_text("NO-FORBIDDEN-PROMPTS")
    pane.idle()
    assert len(model_calls(server)) == calls  # the dropped prompt never reached the model
    assert [e["payload"]["prompt"] for e in lab.entries("UserPromptSubmit")] == [
        "write yes.txt",
        "do the FORBIDDEN thing",
    ]
