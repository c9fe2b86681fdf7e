"""Interop tier: sessions cross between the CLIs, offline against the scripted server. A session agentteams wrote
resumes in the real `claude --resume ID`, and one the real `claude` wrote resumes in ours (`-c` and `-r ID`): the
resuming CLI's next model request holds the first CLI's turns (prompt, tool call, tool output, answer)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from agentteams.store.transcripts.reader import read_entries
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.transcript_checks import faults

pytestmark = pytest.mark.timeout(180)


def _turns(tag: str) -> list[Any]:
    bash = {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": f"echo {tag}-TOOL-OUT"}}]}
    return [bash, {"content": [{"type": "text", "text": f"{tag}-ANSWER"}]}, {"content": [{"type": "text",
            "text": "RESUMED-ANSWER"}]}]  # fmt: skip


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"{argv[:3]} exited {proc.returncode}: {proc.stderr[-2000:]}"
    return proc


def _ours(cli: Cli, args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = cli(*args, env=env, cwd=cwd, timeout=120)
    assert proc.returncode == 0, f"agentteams {args[:3]} exited {proc.returncode}: {proc.stderr[-2000:]}"
    return proc


def _main_bodies(server: MockServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if "/messages" in r["path"] and (r.get("body") or {}).get("tools")]


def _setup(tmp_path: Path, version: str) -> tuple[Path, Path]:
    cwd, config = tmp_path / "proj", tmp_path / "config"
    cwd.mkdir()
    rc.seed_home(config, [cwd], version)
    return cwd, config


def _holds(body: dict[str, Any], *marks: str) -> None:
    sent = json.dumps(body["messages"])
    for mark in marks:
        assert mark in sent, f"{mark} missing from the resuming request"


def test_a_session_of_ours_resumes_in_the_real_claude(claude: Path, claude_version: str, tmp_path: Path,
                                                      cli: Cli) -> None:  # fmt: skip
    cwd, config = _setup(tmp_path, claude_version)
    with MockServer({"routes": [rc.main_route("main", "MARK", _turns("OURS"))]}) as server:
        env = rc.claude_env(config, server.base_url)
        _ours(cli, ["-p", "--dangerously-skip-permissions", "MARK first from ours"], cwd, env)
        [path] = (config / "projects").glob("*/*.jsonl")
        assert faults(path.read_text(), path.stem) == []
        seen = len(_main_bodies(server))
        out = _run([str(claude), "-p", "--dangerously-skip-permissions", "--resume", path.stem, "MARK again in claude"],
                   cwd, env)  # fmt: skip
        assert out.stdout.strip() == "RESUMED-ANSWER"
        [body] = _main_bodies(server)[seen:]
    _holds(body, "MARK first from ours", "OURS-TOOL-OUT", "OURS-ANSWER", "MARK again in claude")
    found = read_entries(path)  # the real CLI appended to our file, under our session id, chained onto our leaf
    assert any(e.get("type") == "user" and e["message"]["content"] == "MARK again in claude" for e in found)
    assert {e["sessionId"] for e in found if "sessionId" in e} == {path.stem}
    assert faults(path.read_text(), path.stem) == []


@pytest.mark.parametrize("how", ["-c", "-r"])
def test_a_session_of_the_real_claude_resumes_in_ours(claude: Path, claude_version: str, tmp_path: Path,
                                                      how: str, cli: Cli) -> None:  # fmt: skip
    cwd, config = _setup(tmp_path, claude_version)
    with MockServer({"routes": [rc.main_route("main", "MARK", _turns("CLAUDE"))]}) as server:
        env = rc.claude_env(config, server.base_url)
        _run([str(claude), "-p", "--dangerously-skip-permissions", "MARK first from claude"], cwd, env)
        [path] = (config / "projects").glob("*/*.jsonl")
        seen = len(_main_bodies(server))
        pick = ["-c"] if how == "-c" else ["-r", path.stem]
        out = _ours(cli, ["-p", *pick, "--output-format", "json", "MARK again in ours"], cwd, env)
        assert json.loads(out.stdout)["result"] == "RESUMED-ANSWER"
        assert json.loads(out.stdout)["session_id"] == path.stem
        [body] = _main_bodies(server)[seen:]
    _holds(body, "MARK first from claude", "CLAUDE-TOOL-OUT", "CLAUDE-ANSWER", "MARK again in ours")
    assert body["model"] == json.loads(json.dumps(_main_bodies(server)[0]))["model"]  # on the session's model
    assert faults(path.read_text(), path.stem) == []  # our entries chain onto the real CLI's
