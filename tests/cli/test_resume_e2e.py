"""Resume end to end, as a user runs it: `agentteams -p` processes against the scripted server, then `-c`,
`-r ID`, `--fork-session`, and the flag errors; the request after resuming carries the whole earlier conversation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.transcripts.reader import read_entries
from tests.support.cli import Cli
from tests.support.headless import agentteams, notes_work, script, serve, tool

SKIP = "--dangerously-skip-permissions"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return notes_work(tmp_path)  # notes.txt in draft (tests/support/headless.py), not the conftest's empty dir


def main_requests(server: MockServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if r["path"].startswith("/v1/messages") and r["body"].get("tools")]


def said(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


def sessions_of(config_root: Path) -> list[Path]:
    return sorted((config_root / "projects").glob("*/*.jsonl"))


@pytest.fixture
def first(cli: Cli, config_root: Path, work: Path, servers: list[MockServer]) -> tuple[MockServer, Path]:
    """A first session: a Bash tool call (its output in the conversation), then an answer."""
    server = serve(servers, script(tool("Bash", command="echo TOOL-OUT-1"), "FIRST-ANSWER",
                                          "SECOND-ANSWER", "THIRD-ANSWER"))  # fmt: skip
    proc = agentteams(cli, work, "-p", "FIRST-PROMPT", SKIP, "--model", "opus", base_url=server.base_url)
    assert proc.returncode == 0 and proc.stdout.strip() == "FIRST-ANSWER", proc.stderr
    [path] = sessions_of(config_root)
    return server, path


def test_continue_appends_to_the_newest_session_and_resends_it(cli: Cli, config_root: Path, work: Path,
                                                               first: tuple[MockServer, Path]) -> None:  # fmt: skip
    server, path = first
    before = read_entries(path)
    proc = agentteams(cli, work, "-p", "-c", "SECOND-PROMPT", base_url=server.base_url)
    assert proc.returncode == 0 and proc.stdout.strip() == "SECOND-ANSWER", proc.stderr
    body = main_requests(server)[-1]
    for mark in ("FIRST-PROMPT", "TOOL-OUT-1", "FIRST-ANSWER", "SECOND-PROMPT"):
        assert mark in said(body)
    assert body["model"].startswith("claude-opus")  # it goes on on its own model, not the default
    assert sessions_of(config_root) == [path]  # the same file, the same id
    after = read_entries(path)
    assert after[: len(before)] == before and {e["sessionId"] for e in after} == {path.stem}
    new_prompt = next(e for e in after[len(before) :] if e["type"] == "user")
    assert new_prompt["parentUuid"] == [e["leafUuid"] for e in before if e["type"] == "last-prompt"][-1]


def test_resume_by_id_picks_that_session_not_the_newest(cli: Cli, config_root: Path, work: Path,
                                                        first: tuple[MockServer, Path]) -> None:  # fmt: skip
    server, path = first
    other = agentteams(cli, work, "-p", "OTHER-PROMPT", SKIP, base_url=server.base_url)
    assert other.returncode == 0, other.stderr
    assert len(sessions_of(config_root)) == 2
    proc = agentteams(cli, work, "-p", "--resume", path.stem, "THIRD-PROMPT", "--output-format", "json",
                      base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["session_id"] == path.stem
    body = said(main_requests(server)[-1])
    assert "FIRST-PROMPT" in body and "THIRD-PROMPT" in body and "OTHER-PROMPT" not in body


def test_resume_by_name_picks_the_session_given_that_name(cli: Cli, config_root: Path, work: Path,
                                                          first: tuple[MockServer, Path]) -> None:  # fmt: skip
    server, path = first  # an unnamed session, newer ones named: -r NAME takes the named one (any case), as claude
    named = agentteams(cli, work, "-p", "NAMED-PROMPT", "-n", "My Feature", SKIP, base_url=server.base_url)
    other = agentteams(cli, work, "-p", "OTHER-PROMPT", "-n", "my feature 2", SKIP, base_url=server.base_url)
    assert named.returncode == other.returncode == 0, named.stderr + other.stderr
    proc = agentteams(cli, work, "-p", "-r", "MY FEATURE", "THIRD-PROMPT", "--output-format", "json",
                      base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    body = said(main_requests(server)[-1])
    assert "NAMED-PROMPT" in body and "THIRD-PROMPT" in body and "OTHER-PROMPT" not in body
    assert json.loads(proc.stdout)["session_id"] not in (path.stem,)
    missing = agentteams(cli, work, "-p", "-r", "my", "x", base_url=server.base_url)  # a part of a name is not it
    assert missing.returncode == 1 and "'my' is neither a session ID nor a session's name" in missing.stderr


def test_a_session_id_in_use_is_refused(cli: Cli, work: Path, first: tuple[MockServer, Path]) -> None:
    server, path = first
    proc = agentteams(cli, work, "-p", "--session-id", path.stem, "again", base_url=server.base_url)
    assert proc.returncode == 1 and f"session ID {path.stem} is already in use" in proc.stderr


def test_fork_session_leaves_the_original_untouched(cli: Cli, config_root: Path, work: Path,
                                                    first: tuple[MockServer, Path]) -> None:  # fmt: skip
    server, path = first
    original = path.read_bytes()
    proc = agentteams(cli, work, "-p", "-r", path.stem, "--fork-session", "FORK-PROMPT", "--output-format", "json",
                      base_url=server.base_url)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    new_id = json.loads(proc.stdout)["session_id"]
    assert new_id != path.stem and path.read_bytes() == original
    forked = path.with_name(f"{new_id}.jsonl")
    assert forked.exists() and "FIRST-PROMPT" in forked.read_text() and "FORK-PROMPT" in forked.read_text()
    assert "FIRST-PROMPT" in said(main_requests(server)[-1])


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["-c"], "no conversation found to continue in"),
        (["-r", "5e551010-0000-4000-8000-00000000abcd"], "no conversation found with session ID 5e551010"),
        (["-r"], "--resume with -p: 'hello' is neither a session ID nor a session's name"),  # the next word's
        (["-r", "--verbose"], "--resume with -p: a session ID or name is needed"),
        (["--fork-session"], "--fork-session needs --continue or --resume"),
        (["-c", "-r", "x"], "--continue and --resume cannot be used together"),
        (["-c", "--session-id", "5e551010-0000-4000-8000-00000000abcd"], "only together with --fork-session"),
    ],
)
def test_resume_flag_errors_are_one_line(cli: Cli, config_root: Path, work: Path, args: list[str],
                                         error: str) -> None:  # fmt: skip
    proc = agentteams(cli, work, "-p", *args, "hello", base_url="http://127.0.0.1:9")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and error in proc.stderr, proc.stderr
