"""The interactive lead (`agentteams [PROMPT]` without -p), driven for real in a pane of a private tmux server.

Each test starts `agentteams` against the project's scripted Messages API, types with `send-keys` and polls
`capture-pane`; the renderer's plain (non-terminal) output is checked directly and through a pipe.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentteams.agent.loop import AgentEvent, TurnResult
from agentteams.mockapi import MockServer
from agentteams.model.types import Usage
from agentteams.store.paths import Layout
from agentteams.store.transcripts.writer import AssistantMeta, Transcript
from agentteams.team.delivery import TeamEvent
from agentteams.tools.base import ToolResult
from agentteams.ui.questions import Questions, permission_question
from agentteams.ui.render import Renderer, make_console
from agentteams.ui.terminal import LoopWriter
from tests.support.cli import Cli
from tests.support.lead_pane import (
    API_KEY,
    QUESTION,
    START,
    approve_shutdown,
    input_line,
    lead_route,
    model_calls,
    tool_turn,
)
from tests.support.procs import child_env
from tests.support.wait import wait_until

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SESSION = "5e551010-0000-4000-8000-0000000000aa"
ESC = re.compile(r"\x1b")


def wait_for(cond: Callable[[], bool], timeout: float) -> bool:
    """Whether `cond` became true within `timeout` seconds (polled; no failure when it did not)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def assert_no_stray_prompt(screen: str) -> None:
    """Output printed while the prompt (re)draws itself must not leave an empty prompt behind (only the live one,
    which is hidden for an instant while something is written above it)."""
    assert len([ln for ln in screen.splitlines() if ln.rstrip() == ">"]) <= 1, screen


# -- in a terminal -----------------------------------------------------------------------------------


def test_prompt_argument_then_typed_prompt_and_history(start_lead: Callable[..., Any], config_root: Path) -> None:
    script = {"routes": [lead_route(
        {"text": "FIRST-ANSWER streamed in small pieces", "chunk": 4, "delta_delay_ms": 20}, "SECOND-ANSWER",
    )]}  # fmt: skip
    pane, server, _ = start_lead(script, "say hello")
    started = time.monotonic()
    pane.wait_text("⏺ FIRST-ANSWER streamed in small pieces", timeout=START)
    first = time.monotonic() - started
    pane.idle()
    pane.submit("second question")
    pane.wait_text("⏺ SECOND-ANSWER")
    pane.idle()
    assert "> second question" in pane.screen()
    pane.press("Up")
    pane.wait(lambda s: input_line(s) == "second question", "↑ to recall the second prompt")
    pane.press("Up")
    pane.wait(lambda s: input_line(s) == "say hello", "↑↑ to recall the prompt given as argument")
    pane.press("C-c")  # clears the recalled line
    pane.wait(lambda s: input_line(s) == "", "Ctrl-C to clear the input line")
    history = (config_root / "agentteams" / "history").read_text(encoding="utf-8")
    assert "+say hello" in history and "+second question" in history
    assert (config_root / "agentteams" / "history").stat().st_mode & 0o777 == 0o600  # what the person typed is private
    users = [str(body["messages"][-1]["content"]) for body in model_calls(server)]
    assert any("say hello" in u for u in users) and any("second question" in u for u in users)
    print(f"first answer {first:.2f}s after start")


def test_multiline_input_is_one_prompt(start_lead: Callable[..., Any]) -> None:
    pane, server, _ = start_lead({"routes": [lead_route("GOT-IT")]})
    pane.idle(timeout=START)
    pane.type("line one")
    pane.press("M-Enter")  # Alt-Enter: a newline, not a send
    pane.type("line two")
    pane.wait(lambda s: "  line two" in s, "the second input line")
    assert model_calls(server) == []
    pane.press("Enter")
    pane.wait_text("⏺ GOT-IT")
    calls = model_calls(server)
    assert len(calls) == 1 and "line one\nline two" in json.dumps(calls[0]["messages"][-1]).replace("\\n", "\n")


def test_tool_call_is_one_compact_line(start_lead: Callable[..., Any]) -> None:
    script = {"routes": [lead_route(
        tool_turn("Bash", command="echo hi > f.txt", description="write f.txt"),
        tool_turn("Bash", command="cat missing-file.txt"),
        "WROTE-IT",
    )]}  # fmt: skip
    pane, _, work = start_lead(script, "--dangerously-skip-permissions", "make the file")
    pane.wait_text("⏺ WROTE-IT", timeout=START)
    pane.idle()
    screen = pane.screen()
    lines = [ln.rstrip() for ln in screen.splitlines()]  # capture-pane -J keeps trailing spaces
    assert "⏺ Bash(echo hi > f.txt)" in lines, screen
    assert "⏺ Bash(cat missing-file.txt)" in lines, screen
    results = [ln for ln in lines if ln.startswith("  ⎿")]
    assert results[0] == "  ⎿  (no output)", screen  # a preview of each call's output (the Bash tool says none)
    assert len(results) == 2 and "No such file" in results[1], screen  # a failure: one dim line
    assert_no_stray_prompt(screen)
    assert (work / "f.txt").read_text(encoding="utf-8") == "hi\n"


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_ctrl_c_stops_a_long_turn(start_lead: Callable[..., Any]) -> None:
    script = {"routes": [lead_route(tool_turn("Bash", command="sleep 30"), "NEVER-SEEN", "AFTER-INTERRUPT")]}
    pane, server, _ = start_lead(script, "--dangerously-skip-permissions", "wait a while")
    pane.wait_text("⏺ Bash(sleep 30)", timeout=START)
    pane.wait_text("working…")
    calls = len(model_calls(server))
    pane.press("C-c")
    took = pane.wait_text("Interrupted", timeout=10)
    pane.idle(timeout=10)
    assert took < 5, f"the interrupt took {took:.1f}s"
    assert len(model_calls(server)) == calls, "an interrupted turn must not call the model again"
    pane.submit("carry on")
    pane.wait_text("⏺ NEVER-SEEN")  # the route's next turn: the model was asked again, the session lives
    assert "AFTER-INTERRUPT" not in pane.screen()
    print(f"Ctrl-C to Interrupted: {took:.2f}s")


def test_ctrl_c_mid_answer_keeps_the_partial_answer_once(start_lead: Callable[..., Any]) -> None:
    words = " ".join(f"w{i}" for i in range(400))
    slow = {"text": "PARTIAL-START " + words, "chunk": 8, "delta_delay_ms": 40}
    pane, server, _ = start_lead({"routes": [lead_route(slow, "NEXT-ANSWER")]}, "talk")
    pane.wait_text("PARTIAL-START", timeout=START)
    pane.press("C-c")
    pane.wait_text("Interrupted", timeout=10)
    pane.idle(timeout=10)
    assert pane.screen().count("PARTIAL-START") == 1, pane.screen()  # printed once, not again at the end
    pane.submit("go on")
    pane.wait_text("⏺ NEXT-ANSWER")
    last = model_calls(server)[-1]["messages"]
    kept = [m for m in last if m["role"] == "assistant" and "PARTIAL-START" in json.dumps(m)]
    assert kept, last  # the cut-off answer is in the conversation, followed by the interruption marker
    assert "[Request interrupted by user]" in json.dumps(last[last.index(kept[0]) + 1])


def test_permission_ask_answered_at_the_prompt(start_lead: Callable[..., Any], tmp_path: Path) -> None:
    work = tmp_path / "work"
    script = {"routes": [lead_route(
        tool_turn("Write", file_path=str(work / "yes.txt"), content="CONTENT-OF-YES"), "FIRST-DONE",
        tool_turn("Write", file_path=str(work / "no.txt"), content="no"), "SECOND-DONE",
    )]}  # fmt: skip
    pane, server, _ = start_lead(script, "write yes.txt")
    pane.wait_text(f"Create {work / 'yes.txt'}", timeout=START)  # no team: no lead named, as claude asks
    pane.wait(lambda s: QUESTION in s and "CONTENT-OF-YES" in s, "the question, the file's content under it")
    pane.submit("1")
    pane.wait_text("⏺ FIRST-DONE")
    assert (work / "yes.txt").read_text(encoding="utf-8") == "CONTENT-OF-YES"
    pane.idle()
    pane.submit("now write no.txt")
    pane.wait_text(f"Create {work / 'no.txt'}")
    pane.submit("maybe")  # not an answer: asked again, nothing decided
    pane.wait_text("Answer 1 yes")
    pane.submit("3 write it to maybe.txt instead")  # no, and what to do instead: the model is told
    pane.wait_text("⏺ SECOND-DONE")
    assert not (work / "no.txt").exists()
    pane.idle()
    screen = pane.screen()
    assert "denied permission to use Write" in screen, screen
    told = json.dumps(model_calls(server)[-1]["messages"][-1])
    assert "The user said: write it to maybe.txt instead" in told, told
    assert_no_stray_prompt(screen)


def test_an_edit_question_shows_the_diff_and_yes_always_accepts_edits_from_then_on(
    start_lead: Callable[..., Any], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "f.py").write_text("keep = 1\nold_line = 2\n", encoding="utf-8")
    script = {"routes": [lead_route(
        tool_turn("Read", file_path=str(work / "f.py")),  # an Edit needs the file read first (as Claude Code)
        tool_turn("Edit", file_path=str(work / "f.py"), old_string="old_line = 2", new_string="new_line = 3"),
        tool_turn("Write", file_path=str(work / "g.py"), content="g"), "EDITS-DONE",
    )]}  # fmt: skip
    pane, _, _ = start_lead(script, "edit f.py")
    pane.wait_text(f"Make this edit to {work / 'f.py'}", timeout=START)
    pane.wait(lambda s: "-old_line = 2" in s and "+new_line = 3" in s and QUESTION in s, "the diff under the question")
    pane.wait_text("accept edits for the rest of this session")  # the choices follow the question: wait for them
    pane.submit("2")
    pane.wait_text("⏺ EDITS-DONE")  # the Write after it ran unasked: acceptEdits from the answer on
    assert (work / "g.py").read_text(encoding="utf-8") == "g"
    assert (work / "f.py").read_text(encoding="utf-8") == "keep = 1\nnew_line = 3\n"
    pane.wait_text("⏵⏵ accept edits on")  # the toolbar says so
    assert pane.screen().count("Make this edit to") == 1


def test_shift_tab_cycles_the_modes_and_the_toolbar_shows_each(start_lead: Callable[..., Any]) -> None:
    pane, _, _ = start_lead({"routes": [lead_route("HI")]})
    pane.idle(timeout=START)
    pane.wait_text("default mode (shift+tab to cycle)")
    for shown in ("⏵⏵ accept edits on", "⏸ plan mode on", "default mode"):
        before = pane.screen().count(f"Permission mode: {shown}")
        pane.press("BTab")
        pane.wait(lambda s, b=before, m=shown: s.count(f"Permission mode: {m}") > b, f"Shift-Tab to {shown}")
    pane.submit("/permissions mode acceptEdits")
    pane.wait_text("Permission mode: acceptEdits (for this session).")
    pane.submit("/permissions")
    pane.wait_text("Permission mode: acceptEdits\n")


def test_ctrl_d_without_team_exits_0(start_lead: Callable[..., Any]) -> None:
    pane, _, _ = start_lead({"routes": [lead_route("HI")]})
    pane.idle(timeout=START)
    pane.press("C-c")  # at an empty prompt, nothing running: only a hint
    pane.wait_text("Press Ctrl-D or type /exit to leave.")
    pane.submit("/team")
    pane.wait_text("No team yet")
    pane.press("C-d")
    pane.wait(lambda _s: pane.exit_status() is not None, "the process to end")
    assert pane.exit_status() == 0
    assert "Shut down the team" not in pane.screen()


def test_ctrl_d_says_how_to_resume_and_the_picker_resumes(
    start_lead: Callable[..., Any], config_root: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    earlier = Transcript(Layout(config_root).transcript_file(work, SESSION), SESSION, cwd=str(work))
    earlier.prompt("team-lead", "EARLIER-PROMPT about the parser")
    earlier.assistant("team-lead", [{"type": "text", "text": "EARLIER-ANSWER"}],
                      AssistantMeta("msg_1", "claude-opus-4-8", "end_turn", {}))  # fmt: skip
    pane, server, _ = start_lead({"routes": [lead_route("RESUMED-ANSWER")]}, "-r")
    pane.wait_text("Number or session id", timeout=START)
    assert "1.  " in pane.screen() and "EARLIER-PROMPT about the parser" in pane.screen()
    pane.type("1")
    pane.press("Enter")
    pane.idle(timeout=START)
    pane.submit("going on")
    pane.wait_text("⏺ RESUMED-ANSWER")
    pane.idle()
    sent = json.dumps(model_calls(server)[-1]["messages"])
    assert "EARLIER-PROMPT about the parser" in sent and "EARLIER-ANSWER" in sent and "going on" in sent
    pane.press("C-d")
    pane.wait(lambda _s: pane.exit_status() is not None, "the process to end")
    assert pane.exit_status() == 0 and f"Resume this session with: agentteams --resume {SESSION}" in pane.screen()
    assert "going on" in earlier.path.read_text()  # appended to the same session


def team_lead_route(marker: str) -> dict[str, Any]:
    """The lead creates team crew, spawns alice, and answers once `marker` has reached it."""
    return lead_route(
        tool_turn("TeamCreate", team_name="crew", description="a test team"),
        tool_turn("Task", name="alice", team_name="crew", prompt="Report in.", description="alice reports"),
        "SPAWNED-ALICE",
        {"wait_for": marker, "text": "LEAD-GOT-REPORT"},
    )


def test_team_message_appears_in_lead_pane(start_lead: Callable[..., Any], config_root: Path) -> None:
    alice = {
        "name": "alice", "match": {"system": "Your name is alice"}, "idle": "alice idle.",
        "turns": [tool_turn("SendMessage", to="team-lead", message="ALICE-REPORT: all done", summary="report"),
                  approve_shutdown()],
    }  # fmt: skip
    routes = [alice, team_lead_route("ALICE-REPORT")]
    pane, _, _ = start_lead({"routes": routes}, "--dangerously-skip-permissions", "build a team")
    pane.wait_text("⏺ Task(alice reports)", timeout=START)
    pane.wait_text("alice joined the team")
    pane.wait_text("✉ alice: ALICE-REPORT: all done")
    pane.wait_text("⏺ LEAD-GOT-REPORT")
    pane.idle()
    pane.submit("/team")
    pane.wait_text("Team crew: 1 teammate")
    assert re.search(r"● alice +(idle|working|starting)", pane.screen())
    assert_no_stray_prompt(pane.screen())
    pane.press("C-d")
    pane.wait_text("Shut down the team (1 teammate) before leaving? [Y/n]")
    pane.press("Enter")
    pane.wait_text("Teammate alice shut down")
    pane.wait(lambda _s: pane.exit_status() is not None, "the lead to exit", timeout=40)
    assert pane.exit_status() == 0
    assert not (config_root / "teams" / "crew").exists(), pane.screen()


def test_teammate_permission_request_is_answered_at_the_prompt(
    start_lead: Callable[..., Any], config_root: Path, tmp_path: Path
) -> None:
    target = tmp_path / "work" / "alice.txt"
    alice = {
        "name": "alice", "match": {"system": "Your name is alice"}, "idle": "alice idle.",
        "turns": [tool_turn("Write", file_path=str(target), content="from alice"),
                  tool_turn("SendMessage", to="team-lead", message="ALICE-WROTE", summary="wrote")],
    }  # fmt: skip
    pane, _, _ = start_lead({"routes": [alice, team_lead_route("ALICE-WROTE")]}, "build a team")  # default mode
    pane.wait_text(f"Teammate alice wants to create {target}", timeout=START)
    pane.wait(lambda s: input_line(s) == "" and QUESTION in s, "the question's prompt")
    pane.submit("1")
    pane.wait_text("✉ alice: ALICE-WROTE")
    assert target.read_text(encoding="utf-8") == "from alice"
    pane.wait_text("⏺ LEAD-GOT-REPORT")
    pane.wait_text("alice is idle")  # the idle notice may start one more lead turn (IDLE-ANSWER) after this
    pane.idle()
    question = "Shut down the team (1 teammate) before leaving? [Y/n]"
    pane.press("C-d")
    # once in a CI run a Ctrl-D pressed as that turn's output was drawn was not seen (issue 14 looks into it): a
    # person would press it again; the question must still come, and only once
    if not wait_for(lambda: question in pane.screen(), 5):
        pane.idle()
        pane.press("C-d")
    pane.wait_text(question)
    pane.submit("n")  # leave it: the team stays on disk for a later lead
    pane.wait(lambda _s: pane.exit_status() is not None, "the lead to exit", timeout=40)
    assert pane.exit_status() == 0
    assert "keeps running without its lead" in pane.screen()
    assert (config_root / "teams" / "crew" / "config.json").exists()


# -- not a terminal ----------------------------------------------------------------------------------


def test_renderer_without_a_terminal_writes_no_escape_codes() -> None:
    out = io.StringIO()
    renderer = Renderer(make_console(False))
    renderer.console.file = out
    renderer.agent_event(AgentEvent("text", text="Hello "))
    renderer.agent_event(AgentEvent("text", text="world.\nSecond line"))
    renderer.agent_event(AgentEvent("tool_start", tool="Bash", input={"command": "ls -la"}))
    renderer.agent_event(AgentEvent("tool_end", tool="Bash", result=ToolResult.error("boom\nmore detail")))
    renderer.team_event(TeamEvent("joined", "alice", "in-process", color="purple"))
    renderer.team_event(TeamEvent("message", "alice", "hi lead", color="purple"))
    renderer.team_event(TeamEvent("idle", "alice", ""))
    renderer.team_event(TeamEvent("died", "alice", "Teammate alice stopped unexpectedly."))
    renderer.turn_end(TurnResult("x", "interrupted", 1, Usage()))
    text = out.getvalue()
    assert not ESC.search(text), repr(text)
    assert text.splitlines()[:5] == [
        "⏺ Hello world.", "  Second line", "⏺ Bash(ls -la)", "  ⎿  boom more detail",
        "+ alice joined the team (in-process)",
    ]  # fmt: skip
    assert "✉ alice: hi lead" in text and "· alice is idle" in text and "✗ Teammate alice stopped" in text
    assert "Interrupted" in text


def test_renderer_on_a_terminal_colours_team_events_and_holds_the_partial_line() -> None:
    out = io.StringIO()
    renderer = Renderer(make_console(True), hold_partial=True)
    renderer.console.file = out
    changes: list[str] = []
    renderer.on_change = lambda: changes.append(renderer.partial)
    renderer.text("half a li")
    assert out.getvalue() == "" and renderer.partial == "⏺ half a li"  # shown on the prompt, not printed
    renderer.text("ne\nnext")
    assert "half a line" in out.getvalue() and renderer.partial == "  next"
    renderer.team_event(TeamEvent("message", "bob", "hello", color="green"))
    assert renderer.partial == "  next" and "hello" not in out.getvalue()  # not inside the answer
    renderer.turn_end(None)
    assert renderer.partial == "" and ESC.search(out.getvalue())
    assert out.getvalue().index("next") < out.getvalue().index("hello")
    assert changes


def test_loop_writer_keeps_each_threads_order_and_writes_directly_once_stopped() -> None:
    import asyncio
    import threading

    out = io.StringIO()
    writer = LoopWriter(out)

    def worker(n: int) -> None:
        for i in range(50):
            writer.write(f"{n}:{i}\n")
            writer.flush()

    async def session() -> None:
        serving = asyncio.create_task(writer.serve())
        await asyncio.sleep(0)
        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            await asyncio.to_thread(t.join)
        writer.stop()
        await serving

    asyncio.run(session())
    writer.write("after\n")
    writer.flush()
    lines = out.getvalue().splitlines()
    assert len(lines) == 201 and lines[-1] == "after"
    for n in range(4):
        assert [ln for ln in lines if ln.startswith(f"{n}:")] == [f"{n}:{i}" for i in range(50)]


def test_yes_and_dont_ask_again_for_a_teammate_holds_for_its_next_same_call(
    start_lead: Callable[..., Any], config_root: Path, tmp_path: Path
) -> None:
    first, second = tmp_path / "work" / "a1", tmp_path / "work" / "a2"
    alice = {
        "name": "alice", "match": {"system": "Your name is alice"}, "idle": "alice idle.",
        "turns": [tool_turn("Bash", command=f"touch {first}"), tool_turn("Bash", command=f"touch {second}"),
                  tool_turn("SendMessage", to="team-lead", message="ALICE-TOUCHED", summary="touched")],
    }  # fmt: skip
    pane, _, _ = start_lead({"routes": [alice, team_lead_route("ALICE-TOUCHED")]}, "build a team")
    pane.wait_text("Teammate alice wants to run a command", timeout=START)
    pane.wait(lambda s: input_line(s) == "" and QUESTION in s, "the question's prompt")
    pane.wait_text("don't ask again for the same from this teammate")  # the choices follow the question
    pane.submit("2")
    pane.wait_text("✉ alice: ALICE-TOUCHED")  # the second touch was not asked about: the lead remembered
    assert first.exists() and second.exists()
    assert pane.screen().count("Teammate alice wants to run a command") == 1


def test_questions_hand_the_answer_back_and_deny_once_closed() -> None:
    import threading

    shown: list[str] = []
    questions = Questions(lambda q: shown.append(q.text))
    answers: list[str] = []
    asker = threading.Thread(target=lambda: answers.append(questions.ask(permission_question("may I?", "always"))))
    asker.start()
    wait_until(lambda: questions.current() is not None, 5, "the question")
    assert not questions.answer("perhaps") and questions.current() is not None
    assert questions.answer("2")
    asker.join(5)
    assert answers == ["always"] and shown == ["may I?"]
    no = permission_question("and this?", "always")
    asker = threading.Thread(target=lambda: answers.append(questions.ask(no)))
    asker.start()
    wait_until(lambda: questions.current() is no, 5, "the second question")
    assert questions.answer("3 do it another way")
    asker.join(5)
    assert answers[-1] == "deny" and no.feedback == "do it another way"
    questions.close()
    assert questions.ask(permission_question("again?", "always")) == "deny"


def test_piped_session_is_plain_lines(cli: Cli, tmp_path: Path, config_root: Path) -> None:
    script = {"routes": [lead_route(tool_turn("Bash", command="echo piped > p.txt"), "PIPED-ANSWER", "TWO")]}
    with MockServer(script).start() as server:
        env = child_env(config_root)
        env.update({"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": API_KEY, "TERM": "xterm-256color",
                    "FORCE_COLOR": "1", "PYTHONIOENCODING": "utf-8"})  # fmt: skip
        proc = cli("--teammate-mode", "in-process", "--dangerously-skip-permissions", input="first\n/help\nsecond\n",
                   env=env, cwd=tmp_path, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not ESC.search(proc.stdout), repr(proc.stdout)
    lines = proc.stdout.splitlines()
    assert lines.index("> first") < lines.index("⏺ Bash(echo piped > p.txt)") < lines.index("⏺ PIPED-ANSWER")
    assert lines.index("⏺ PIPED-ANSWER") < lines.index("> second") < lines.index("⏺ TWO")
    assert re.search(r"/team +the team's teammates and what each is doing", proc.stdout), proc.stdout
    assert (tmp_path / "p.txt").exists()
