"""What a teammate's pane prints: plain lines off a terminal, each incoming message as `✉ sender: first line`."""

from __future__ import annotations

import io

from agentteams.agent.loop import AgentEvent
from agentteams.store.records import Envelope
from agentteams.team.delivery import render_batch
from agentteams.ui.pane import PaneRenderer


def test_incoming_messages_show_sender_and_first_line_without_escape_codes() -> None:
    out = io.StringIO()
    pane = PaneRenderer(out, name="alice", color="blue")
    batch = render_batch([
        Envelope(sender="team-lead", text="Start on #1\nDetails follow", timestamp=""),
        Envelope(sender="bob", text="parser ready", timestamp="", color="green", summary="parser done"),
    ])  # fmt: skip
    pane.agent_event(AgentEvent("user", message={"role": "user", "content": batch}))
    pane.agent_event(AgentEvent("user", message={"role": "user", "content": "You claimed task #3 from the list"}))
    assert out.getvalue().splitlines() == [
        "✉ team-lead: Start on #1",
        "✉ bob: parser ready",
        "▸ You claimed task #3 from the list",
    ]
    assert "\033" not in out.getvalue()
