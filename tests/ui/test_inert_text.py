"""Text from models, files and peers is inert on the terminal: a task subject, a message, a model's answer or a tool's
output full of escape sequences prints them visibly, in every place that prints them (the store commands, `status`,
`logs`, the REPL and the teammate panes), and changes neither the pane's title nor the clipboard."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from agentteams.agent.loop import AgentEvent
from agentteams.inert_text import inert
from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.team.delivery import TeamEvent
from agentteams.tools.base import ToolResult
from agentteams.ui.pane import PaneRenderer
from agentteams.ui.render import Renderer, make_console
from tests.support.builders import team_with_members
from tests.support.cli import Cli

TITLE = "\x1b]0;PWNED\x07"  # sets the terminal's (and tmux pane's) title
CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"  # OSC 52: writes the clipboard
CLEAR = "\x1b[2J\x1b[H"  # clears the screen
C1_CSI = "\x9b31m"  # a one-byte CSI to many terminals
HOSTILE = f"Fix it {TITLE}{CLIPBOARD}{CLEAR}{C1_CSI} now\rOVERWRITTEN"
OBEYED = ("\x1b", "\x07", "\x9b", "\r")


def obeys(text: str) -> list[str]:
    return [c for c in OBEYED if c in text]


def test_every_control_character_but_tab_and_newline_is_shown() -> None:
    assert inert(HOSTILE) == ("Fix it ^[]0;PWNED^G^[]52;c;ZXZpbA==^G^[[2J^[[H<U+009B>31m now^MOVERWRITTEN")
    assert inert("a\tb\nc é 日本 🙂") == "a\tb\nc é 日本 🙂"  # tabs, newlines and printable text untouched
    assert inert("\x00\x7f") == "^@^?"


@pytest.fixture
def hostile_team(layout: Layout) -> FileStore:
    team_with_members(layout, "evil", "alice")
    store = FileStore(layout)
    store.tasks.create("evil", HOSTILE, f"details {TITLE}")
    store.mail.send("evil", "alice", f"hello {CLIPBOARD} there", sender="team-lead", summary=f"sum {TITLE}")
    return store


@pytest.mark.parametrize(
    "args",
    [("task", "list", "evil"), ("task", "get", "evil", "1"), ("msg", "read", "evil", "alice"), ("status", "evil"),
     ("team", "list"), ("team", "show", "evil")],
    ids=" ".join,
)  # fmt: skip
def test_the_store_commands_and_status_print_escapes_visibly(
    hostile_team: FileStore, cli: Cli, args: tuple[str, ...]
) -> None:
    proc = cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert obeys(proc.stdout) == [], f"`agentteams {' '.join(args)}` printed a control sequence raw"
    if args[0] in ("task", "msg", "status"):
        assert "^[]" in proc.stdout, proc.stdout  # shown, not dropped


def test_json_output_keeps_the_text_exact(hostile_team: FileStore, cli: Cli) -> None:
    proc = cli("task", "list", "evil", "--json")
    assert proc.returncode == 0 and "\x1b" not in proc.stdout  # JSON escapes control characters itself
    assert json.loads(proc.stdout)[0]["subject"] == HOSTILE  # and a script reads them back exactly


def test_the_repl_shows_a_models_answer_a_tool_result_and_a_teammates_message_inert() -> None:
    out = io.StringIO()
    renderer = Renderer(make_console(False, out))
    renderer.agent_event(AgentEvent("text", text=f"Done. {TITLE}{CLIPBOARD}\n"))
    renderer.agent_event(AgentEvent("tool_start", tool="Bash", input={"command": f"echo {CLEAR}"}))
    renderer.agent_event(AgentEvent("tool_end", tool="Bash", input={}, result=ToolResult(f"out {C1_CSI}x")))
    renderer.team_event(TeamEvent("message", f"alice{TITLE}", f"hi {CLIPBOARD}"))
    renderer.flush()
    shown = out.getvalue()
    assert obeys(shown) == [] and shown.count("^[]") == 4 and "<U+009B>" in shown, shown


def test_a_teammate_pane_shows_the_models_answer_inert_and_keeps_its_own_colours() -> None:
    out = io.StringIO()
    out.isatty = lambda: True  # type: ignore[method-assign]  # a terminal: the pane paints its own colours
    pane = PaneRenderer(out, name="alice", color="blue")
    pane.agent_event(AgentEvent("text", text=f"answer {TITLE}\n"))
    pane.agent_event(AgentEvent("tool_start", tool="Bash", input={"command": f"echo {CLIPBOARD}"}))
    pane.team_event(TeamEvent("message", "bob", f"note {CLEAR}", color="green"))
    shown = out.getvalue()
    assert "]0;" not in shown.replace("^[]0;", "") and "]52;" not in shown.replace("^[]52;", "")
    assert "^[]0;PWNED^G" in shown and "^[]52;" in shown and "^[[2J" in shown
    assert "\x1b[1m" in shown  # its own bold is still a real escape: only the text is made inert


def test_logs_shows_a_transcripts_text_inert(tmp_path: Path) -> None:
    from agentteams.cli.commands.logs import block_text

    for block, role in (({"type": "text", "text": TITLE}, "assistant"), ({"type": "text", "text": CLIPBOARD}, "user"),
                        ({"type": "tool_result", "content": CLEAR}, "user")):  # fmt: skip
        text = block_text(block, role)
        assert text is not None and obeys(text.plain) == [] and "^[" in text.plain


def test_a_print_runs_warnings_and_debug_lines_show_another_sessions_words_inert(
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """-p has no REPL to render its notices: a message held from another session is a warning line on stderr (the
    CLI's sink), and --debug-to-stderr copies it to stderr again."""
    from agentteams import diagnostics
    from agentteams.agent.peer_texts import held_line
    from agentteams.cli import _one_line
    from agentteams.run.debug_log import DebugLog, Filter
    from agentteams.store.peer_wire import Frame

    frame = Frame("user", "m1", f"uds:/tmp/x{TITLE}.sock", HOSTILE, {"from-name": f"evil{CLIPBOARD}"})
    diagnostics.set_sink(_one_line)
    diagnostics.set_debug(DebugLog(sys.stderr, Filter()))
    try:
        diagnostics.warning("%s", held_line(frame, "held"))
    finally:
        diagnostics.set_sink(None)
        diagnostics.set_debug(None)
    shown = capsys.readouterr().err
    assert shown.count("Held a message") == 2 and obeys(shown) == [] and shown.count("^[]") == 8, shown
