"""The keys people type without thinking, in a real pane of a private tmux server against the scripted Messages API,
as claude 2.1.332 does them (issue 29, item 5): Esc stops a turn, Esc Esc rewinds, `@file` goes into the request,
`!command` runs in the shell, backslash-Enter adds a line, `-c` shows where the conversation left off."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentteams.store.paths import Layout
from agentteams.store.transcripts.writer import AssistantMeta, Transcript
from tests.support.lead_pane import START, input_line, lead_route, model_calls, tool_turn

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def last_user(server: Any) -> str:
    """The newest request's last user message, its text blocks joined."""
    content = model_calls(server)[-1]["messages"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(str(b.get("text", "")) for b in content)


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_esc_stops_a_turn_within_a_second(start_lead: Callable[..., Any]) -> None:
    script = {"routes": [lead_route(tool_turn("Bash", command="sleep 30"), "NEVER-SEEN", "AFTER-ESC")]}
    pane, server, _ = start_lead(script, "--dangerously-skip-permissions", "wait a while")
    pane.wait_text("⏺ Bash(sleep 30)", timeout=START)
    pane.wait_text("esc to interrupt")
    calls = len(model_calls(server))
    pressed = time.monotonic()
    pane.press("Escape")
    pane.wait_text("Interrupted", timeout=10)
    took = time.monotonic() - pressed
    assert took < 1.0, f"Esc to Interrupted took {took:.2f}s"
    pane.idle(timeout=10)
    assert len(model_calls(server)) == calls, "an interrupted turn must not call the model again"
    print(f"Esc to Interrupted: {took:.2f}s")


def test_a_mentioned_file_goes_into_the_request_before_the_prompt(
    start_lead: Callable[..., Any], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("NOTES-CONTENT line one\nline two\n", encoding="utf-8")
    pane, server, _ = start_lead({"routes": [lead_route("GOT-NOTES")]})
    pane.idle(timeout=START)
    pane.type("summarize @no")
    pane.wait_text("notes.txt")  # the completion offered below the line
    pane.press("Tab")
    pane.wait(lambda s: input_line(s) == "summarize @notes.txt", "@notes.txt completed")
    pane.press("Enter")
    pane.wait_text("⏺ GOT-NOTES")
    assert "⎿  Read notes.txt (2 lines)" in pane.screen()
    [call] = model_calls(server)
    blocks = call["messages"][-1]["content"]
    assert blocks[-1]["text"] == "summarize @notes.txt"
    attached = "\n".join(b["text"] for b in blocks[:-1])
    assert str(work / "notes.txt") in attached and "1\tNOTES-CONTENT line one" in attached and "2\tline two" in attached


def test_a_bang_command_runs_with_no_request_and_goes_into_the_next(
    start_lead: Callable[..., Any], config_root: Path
) -> None:
    config_root.mkdir(parents=True, exist_ok=True)
    (config_root / "settings.json").write_text(json.dumps({"respondToBashCommands": False}), encoding="utf-8")
    pane, server, _ = start_lead({"routes": [lead_route("AFTER-BANG")]})
    pane.idle(timeout=START)
    pane.submit("!echo hi-from-the-shell")
    pane.wait(lambda s: "⎿  hi-from-the-shell" in s, "the command's output")
    time.sleep(0.5)  # nothing is sent for it (a request would come at once): a wrong one would show in this time
    assert model_calls(server) == []
    pane.submit("what did it print?")
    pane.wait_text("⏺ AFTER-BANG")
    sent = last_user(server)
    assert "<bash-input>echo hi-from-the-shell</bash-input>" in sent
    assert "<bash-stdout>hi-from-the-shell</bash-stdout>" in sent and sent.endswith("what did it print?")


def test_a_bang_command_is_answered_when_respond_is_left_on(start_lead: Callable[..., Any]) -> None:
    pane, server, _ = start_lead({"routes": [lead_route("SAW-IT-FAIL")]})
    pane.idle(timeout=START)
    pane.submit("!echo out; exit 3")
    pane.wait_text("⏺ SAW-IT-FAIL")  # claude 2.1.332's default: the model answers the command's output
    blocks = model_calls(server)[-1]["messages"][-1]["content"]
    assert blocks[0]["text"] == "<bash-input>echo out; exit 3</bash-input>\n"
    assert blocks[1]["text"].startswith("<bash-stdout></bash-stdout><bash-stderr>out\n")  # a failure: all of it


def test_backslash_enter_makes_a_two_line_request(start_lead: Callable[..., Any]) -> None:
    pane, server, _ = start_lead({"routes": [lead_route("TWO-LINES")]})
    pane.idle(timeout=START)
    pane.type("first line\\")
    pane.press("Enter")
    pane.type("second line")
    pane.wait(lambda s: "  second line" in s, "the second input line")
    assert model_calls(server) == []
    pane.press("Enter")
    pane.wait_text("⏺ TWO-LINES")
    assert last_user(server) == "first line\nsecond line"


def test_esc_esc_rewinds_to_before_an_earlier_prompt(start_lead: Callable[..., Any]) -> None:
    pane, server, _ = start_lead({"routes": [lead_route("ONE", "TWO", "THREE")]})
    pane.idle(timeout=START)
    for prompt, answer in (("PROMPT-A", "ONE"), ("PROMPT-B", "TWO")):
        pane.submit(prompt)
        pane.wait_text(f"⏺ {answer}")
        pane.idle()
    pane.press("Escape")
    pane.press("Escape")
    pane.wait_text("2. PROMPT-B")
    pane.type("2")
    pane.press("Enter")
    pane.wait(lambda s: input_line(s) == "PROMPT-B", "the prompt back on the input line")
    pane.press("Enter")
    pane.wait_text("⏺ THREE")
    sent = json.dumps(model_calls(server)[-1]["messages"])
    assert "PROMPT-A" in sent and sent.count("PROMPT-B") == 1 and "TWO" not in sent


def test_continue_shows_the_conversation_and_names_the_session(
    start_lead: Callable[..., Any], config_root: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    session = "5e551010-0000-4000-8000-0000000000c1"
    earlier = Transcript(Layout(config_root).transcript_file(work, session), session, cwd=str(work), entrypoint="cli")
    earlier.prompt("team-lead", "EARLIER-PROMPT about the parser")
    earlier.assistant("team-lead", [{"type": "text", "text": "EARLIER-ANSWER line"}],
                      AssistantMeta("msg_1", "claude-opus-4-8", "end_turn", {}))  # fmt: skip
    headless = "5e551010-0000-4000-8000-0000000000c2"  # newer, but a -p run's: an interactive -c passes over it
    later = Transcript(Layout(config_root).transcript_file(work, headless), headless, cwd=str(work))
    later.prompt("team-lead", "HEADLESS-PROMPT")
    pane, _, _ = start_lead({"routes": [lead_route("GOING-ON")]}, "-c")
    pane.idle(timeout=START)
    screen = pane.screen()
    assert f"Resumed session {session} · EARLIER-PROMPT about the parser" in screen
    assert "> EARLIER-PROMPT about the parser" in screen and "⏺ EARLIER-ANSWER line" in screen
    assert "HEADLESS-PROMPT" not in screen
