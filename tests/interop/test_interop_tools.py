"""Interop tier, the rest of the tool set: the real Claude Code CLI and ours, given the same scripted calls of each new
tool, send back tool results of the same shape (is_error, content form, and the text's structure: JSON keys or
the tags that open its lines); each scenario also checks what the results must say in both."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import toolshape as ts
from tests.support.cli import Cli
from tests.support.notebooks import make_notebook, reread
from tests.support.web_search import search_turn
from tests.support.webserver import WebSite, serve

pytestmark = pytest.mark.timeout(300)


def tool_turn(name: str, **args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


def nothing(_project: Path) -> None:
    pass


def compare(claude: Path, cli: Cli, version: str, tmp_path: Path, turns: list[Any], prepare: Any = nothing,
            env: dict[str, str] | None = None, routes: tuple[dict[str, Any], ...] | list[dict[str, Any]] = (),
            deferred: str = "") -> tuple[ts.Played, ts.Played]:  # fmt: skip
    """`deferred`: the tools 2.1.330 must load with ToolSearch first (a call ours is not sent)."""
    real_turns, prelude = ts.load_deferred(version, turns, deferred) if deferred else (turns, 0)
    real = ts.play([str(claude)], real_turns, tmp_path / "real", version, prepare, extra_env=env,
                   routes=list(routes), prelude=prelude)  # fmt: skip
    ours = ts.play(cli.argv(), turns, tmp_path / "ours", version, prepare, extra_env=env, routes=list(routes))
    shown = ts.table(real, ours)
    print(f"\n[Claude Code {version}]\n{shown}")
    assert len(real.results) == len(ours.results) == len(turns) - 1, shown
    assert [ts.shape(b) for b in real.results] == [ts.shape(b) for b in ours.results], shown
    return real, ours


BACKGROUND = [
    tool_turn("Bash", command="echo A1; sleep 60", run_in_background=True, description="background"),
    tool_turn("Bash", command="sleep 1", description="wait"),
    tool_turn("BashOutput", bash_id="{{re:ID: (\\w+)}}"),  # 2.1.197 takes the old name (it blocks up to 30 s)
    tool_turn("KillShell", shell_id="{{re:<task_id>(\\w+)</task_id>}}"),
    tool_turn("KillShell", shell_id="bnosuch"),
    "done",
]


def test_background_shells_answer_in_the_same_shape(claude: Path, claude_version: str, cli: Cli,
                                                     tmp_path: Path) -> None:  # fmt: skip
    """2.1.330 has no BashOutput any more (TaskOutput is gone): there, start and KillShell only."""
    turns = BACKGROUND if claude_version == "2.1.197" else [t for t in BACKGROUND if "BashOutput" not in str(t)]
    if claude_version != "2.1.197":  # KillShell's id then comes from the start's answer
        turns[2] = tool_turn("KillShell", shell_id="{{re:ID: (\\w+)}}")
    real, ours = compare(claude, cli, claude_version, tmp_path, turns, deferred="TaskStop")
    for played in (real, ours):
        texts = [ts.text_of(b) for b in played.results]
        assert texts[0].startswith("Command running in background with ID: b")
        if claude_version == "2.1.197":
            assert "<status>running</status>" in texts[2] and "A1" in texts[2]
        assert "Successfully stopped task: " in texts[-2] and "echo A1; sleep 60" in texts[-2]
        assert "bnosuch" in texts[-1]


TODOS = [
    {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
    {"content": "Ship", "status": "pending", "activeForm": "Shipping"},
]
TODO_TURNS = [
    tool_turn("TodoWrite", todos=TODOS),
    tool_turn("TodoWrite", todos=[{**TODOS[0], "status": "bogus"}]),
    "done",
]


# Claude Code offers TodoWrite only with its task tools off (CLAUDE_CODE_ENABLE_TASKS=0); 2.1.330 refuses it outright
@pytest.mark.parametrize("claude_version", ["2.1.197"])
def test_todo_write_answers_in_the_same_shape(claude: Path, claude_version: str, cli: Cli, tmp_path: Path) -> None:
    real, ours = compare(claude, cli, claude_version, tmp_path, TODO_TURNS, env={"CLAUDE_CODE_ENABLE_TASKS": "0"})
    for played in (real, ours):
        assert "todo" in ts.text_of(played.results[0]).lower()
        assert "status" in ts.text_of(played.results[1])


def notebook(project: Path) -> None:
    make_notebook(project / "nb.ipynb")


NB = "{P}/nb.ipynb"
NOTEBOOK_TURNS = [
    tool_turn("NotebookEdit", notebook_path=NB, cell_id="calc", new_source="unread"),
    tool_turn("Read", file_path=NB),
    tool_turn("NotebookEdit", notebook_path=NB, cell_id="calc", new_source="y = 2"),
    tool_turn(
        "NotebookEdit",
        notebook_path=NB,
        cell_id="intro",
        new_source="## Part",
        cell_type="markdown",
        edit_mode="insert",
    ),
    tool_turn("NotebookEdit", notebook_path=NB, cell_id="intro", new_source="", edit_mode="delete"),
    tool_turn("NotebookEdit", notebook_path=NB, cell_id="nope", new_source="z"),
    tool_turn("NotebookEdit", notebook_path=NB, new_source="z", edit_mode="insert"),
    tool_turn("NotebookEdit", notebook_path=NB, cell_id="cell-0", new_source="first by index"),
    tool_turn("Read", file_path=NB),
    "done",
]


def test_notebook_edit_and_read_answer_in_the_same_shape(claude: Path, claude_version: str, cli: Cli,
                                                          tmp_path: Path) -> None:  # fmt: skip
    real, ours = compare(claude, cli, claude_version, tmp_path, NOTEBOOK_TURNS, notebook, deferred="NotebookEdit")
    assert ts.text_of(real.results[1]) == ts.text_of(ours.results[1])  # Read shows the cells the same way
    for played in (real, ours):
        texts = [ts.text_of(b) for b in played.results]
        assert texts[2] == "Updated cell calc with y = 2" and texts[4] == "Deleted cell intro"
        assert texts[1].startswith('<cell id="intro"><cell_type>markdown</cell_type># Title</cell id="intro">')
        nb = reread(played.project / "nb.ipynb")
        assert [(c.cell_type, c.source) for c in nb.cells] == [("markdown", "first by index"), ("code", "y = 2")]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[WebSite]:
    with serve(tmp_path) as web:
        yield web


def web_turns(base: str) -> list[Any]:
    return [
        tool_turn("WebFetch", url=f"{base}/page", prompt="What is the heading?"),
        tool_turn("WebFetch", url=f"{base}/elsewhere", prompt="p"),
        tool_turn("WebFetch", url=f"{base}/same", prompt="p"),
        tool_turn("WebFetch", url=f"{base}/nothing", prompt="p"),
        tool_turn("WebFetch", url=f"{base}/big", prompt="p"),
        tool_turn("WebFetch", url="not a url", prompt="p"),
        "done",
    ]


def test_web_fetch_answers_in_the_same_shape(claude: Path, claude_version: str, cli: Cli, tmp_path: Path,
                                             site: WebSite) -> None:  # fmt: skip
    """Both trust the test certificate (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE); the real CLI's preflight to claude.ai
    is off (skipWebFetchPreflight); both send the page to the small model, which the server answers `OK.`."""
    env = {"NODE_EXTRA_CA_CERTS": str(site.cert), "SSL_CERT_FILE": str(site.cert)}
    turns = web_turns(site.base)
    real_turns, prelude = ts.load_deferred(claude_version, turns, "WebFetch")
    real = ts.play([str(claude)], real_turns, tmp_path / "real", claude_version, nothing, extra_env=env,
                   settings={"skipWebFetchPreflight": True}, prelude=prelude)  # fmt: skip
    ours = ts.play(cli.argv(), turns, tmp_path / "ours", claude_version, nothing, extra_env=env)
    shown = ts.table(real, ours)
    print(f"\n[Claude Code {claude_version}]\n{shown}")
    assert [ts.shape(b) for b in real.results] == [ts.shape(b) for b in ours.results], shown
    for played in (real, ours):
        page, elsewhere, same, missing = (ts.text_of(b) for b in played.results[:4])
        assert page == same == "OK."  # the small model's answer (the server's unscripted reply)
        assert f"https://localhost:{site.port}/page" in elsewhere and "404" in missing
        side = [r["body"] for r in played.requests if "Hello" in json.dumps(r["body"].get("messages"))]
        assert side and side[0]["model"].startswith("claude-haiku") and not side[0].get("tools")


SEARCH_TURNS = [
    tool_turn("WebSearch", query="QMARK python docs", allowed_domains=["docs.python.org"]),
    tool_turn("WebSearch", query="QMARK python", allowed_domains=["a.org"], blocked_domains=["b.org"]),
    "done",
]


def test_web_search_answers_in_the_same_shape(claude: Path, claude_version: str, cli: Cli, tmp_path: Path) -> None:
    """The search request of each carries the server tool with the filter; the scripted provider's results come
    back to the model in the same form (text, then a `Links:` JSON line)."""
    search = {"name": "search", "match": {"any": "QMARK"}, "turns": [search_turn("QMARK python docs")]}
    real, ours = compare(claude, cli, claude_version, tmp_path, SEARCH_TURNS, routes=[search], deferred="WebSearch")
    for played in (real, ours):
        text = ts.text_of(played.results[0])
        assert text.startswith('Web search results for query: "QMARK python docs"\n\nSearching.\n\nLinks: [')
        assert "SUMMARY-MARK" in text and '"url":"https://docs.python.org/3/tutorial/"' in text
        [asked] = [r["body"] for r in played.requests if r.get("route") == "search"]
        [server_tool] = asked["tools"]
        assert server_tool["type"] == "web_search_20250305" and server_tool["allowed_domains"] == ["docs.python.org"]
        forced = played is real and claude_version == "2.1.197"  # 2.1.330, and ours, let the model choose
        assert asked["tool_choice"] == ({"type": "tool", "name": "web_search"} if forced else {"type": "auto"})
