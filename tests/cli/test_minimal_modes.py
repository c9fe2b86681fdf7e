"""`--bare` and `--safe-mode` as real `-p` processes against the scripted server, as claude 2.1.332 runs them: in a
project with CLAUDE.md, an output style and a hook, neither flag lets any of them reach the request; `--bare` offers
Bash, Read and Edit only (or what --tools names) with a system prompt of who it is, where and when, `--safe-mode`
every built-in tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import agentteams, script, serve


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "proj"
    (work / ".claude" / "output-styles").mkdir(parents=True)
    (work / "CLAUDE.md").write_text("PROJ-MEMO\n")
    (work / ".claude" / "output-styles" / "mine.md").write_text("---\nname: mine\n---\nSTYLE-TEXT\n")
    hook = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo HOOK-CONTEXT"}]}]}
    (work / ".claude" / "settings.json").write_text(json.dumps({"outputStyle": "mine", "hooks": hook}))
    return work


def first_request(cli: Cli, work: Path, servers: list[MockServer], *flags: str) -> dict[str, Any]:
    server = serve(servers, script("ok"))
    proc = agentteams(cli, work, "-p", "PROBE", *flags, base_url=server.base_url)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr
    body: dict[str, Any] = server.requests[0]["body"]
    return body


def system_text(body: dict[str, Any]) -> str:
    system = body["system"]
    return system if isinstance(system, str) else "\n".join(b["text"] for b in system)


def test_without_the_flags_the_files_reach_the_request(cli: Cli, project: Path, servers: list[MockServer]) -> None:
    sent = json.dumps(first_request(cli, project, servers))
    assert all(mark in sent for mark in ("PROJ-MEMO", "STYLE-TEXT", "HOOK-CONTEXT"))


@pytest.mark.parametrize("flag", ["--bare", "--safe-mode"])
def test_neither_flag_lets_the_files_in(cli: Cli, project: Path, servers: list[MockServer], flag: str) -> None:
    body = first_request(cli, project, servers, flag)
    sent = json.dumps(body)
    assert not any(mark in sent for mark in ("PROJ-MEMO", "STYLE-TEXT", "HOOK-CONTEXT")), sent[:2000]
    tools = sorted(t["name"] for t in body["tools"])
    if flag == "--bare":
        assert tools == ["Bash", "Edit", "Read"]
        lines = system_text(body).splitlines()
        assert len(lines) == 3 and lines[1] == f"Working directory: {project}" and lines[2].startswith("Date: ")
    else:
        assert {"Bash", "Edit", "Read", "Write", "Grep", "Glob", "Task"} <= set(tools)


def test_bare_takes_the_tools_and_prompt_it_is_given(cli: Cli, project: Path, servers: list[MockServer]) -> None:
    body = first_request(cli, project, servers, "--bare", "--tools", "Read,Write", "--append-system-prompt", "EXTRA")
    assert sorted(t["name"] for t in body["tools"]) == ["Read", "Write"]
    assert system_text(body).endswith("\n\nEXTRA")
