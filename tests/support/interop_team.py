"""A team across the two CLIs, for the interop tests: the team's name, the system-prompt marks that tell whose
request is whose, our lead's scenario with a real `claude` teammate (alice), what each side's model was sent
(user texts, teammate-message blocks, their protocol types), and waiting at a real CLI's pace."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agentteams.mockapi import MockServer
from agentteams.mockapi.reqtext import content_text
from tests.support import realclaude as rc
from tests.support.team_script import say, tool, waiting
from tests.support.wait import wait_until

TEAM = "interop"  # lower case: the real CLI lowercases team directory names
REAL_TEAMMATE_SYSTEM = "# Agent Teammate Communication"  # a section only a real teammate's system prompt has
OUR_TEAMMATE_SYSTEM = "Your name is alice"  # in our teammate's system prompt
OUR_LEAD_SYSTEM = "You lead a team"  # in our lead's system prompt


def user_texts(requests: list[dict[str, Any]]) -> list[str]:
    """The text of every user message in these requests (text blocks and tool results)."""
    return [content_text(m.get("content")) for r in requests for m in r["body"]["messages"] if m["role"] == "user"]


def teammate_blocks(texts: list[str], sender: str) -> list[str]:
    """The bodies of `<teammate-message teammate_id="sender" ...>` blocks in these texts."""
    pattern = re.compile(
        rf'<teammate-message teammate_id="{re.escape(sender)}"[^>]*>\n(.*?)\n</teammate-message>', re.S
    )
    return [m.group(1) for t in texts for m in pattern.finditer(t)]


def unverified(texts: list[str]) -> list[str]:
    """The opening tags of blocks marked `verified="false"`: a message whose claimed sender was not proven (Claude
    Code 2.1.330 and our teammate mark so a lead message that is unsigned or badly signed while they hold a key)."""
    return [m.group(0) for t in texts for m in re.finditer(r'<teammate-message [^>]*verified="false"[^>]*>', t)]


def protocol_types(blocks: list[str]) -> list[str]:
    kinds = []
    for block in blocks:
        try:
            data = json.loads(block)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("type"), str):
            kinds.append(data["type"])
    return kinds


def routed(server: MockServer, prefix: str) -> list[dict[str, Any]]:
    return [r for r in server.requests if str(r.get("route") or "").startswith(prefix)]


def watch(cond: Callable[[], bool], timeout: float, what: str, explain: Callable[[], str]) -> float:
    """wait_until at a real CLI's pace, with `explain()` (pane captures, files) added to the failure message."""
    return wait_until(cond, timeout, what, interval=rc.POLL, explain=explain)


ALICE_PROMPT = "You are alice, a real Claude Code teammate. PROMPT-FOR-ALICE: greet the lead."


def our_lead_scenario() -> dict[str, Any]:
    lead = [
        tool("TeamCreate", team_name=TEAM, description="interop with a real teammate"),
        tool("Task", name="alice", team_name=TEAM, description="real claude teammate", prompt=ALICE_PROMPT),
        say("alice is starting."),
        # the idle notice reaches our model only while the whole team is idle: waiting for it as well as the
        # reply makes "the lead's model saw it" deterministic (alice stays idle until the shutdown request)
        {**tool("SendMessage", to="alice", message={"type": "shutdown_request", "reason": "all done"}),
         "wait_for": ["ALICE-REPLY", "idle_notification"]},
        waiting("Asked alice to shut down."),
        {**tool("TeamDelete"), "wait_for": "Teammate alice shut down"},
        say("Team removed. OUR-LEAD-DONE"),
    ]  # fmt: skip
    alice = [
        rc.send_message_turn("team-lead", "ALICE-REPLY hello from the real CLI", summary="hello"),
        "alice: replied",
        rc.approve_shutdown_turn(),
        "alice: bye",
    ]
    return {"routes": [
        {"name": "alice", "match": {"system": REAL_TEAMMATE_SYSTEM, "tools": True}, "turns": alice,
         "idle": "alice idle"},
        {"name": "lead", "match": {"system": OUR_LEAD_SYSTEM, "tools": True}, "turns": lead, "idle": "Noted."},
    ]}  # fmt: skip
