"""Interop tier, session names (`-n`) with claude 2.1.332, offline against the scripted server: a session one CLI
named resumes by that name (any case) in the other (`-p -r NAME`), and a name no session has is refused by both
with exit code 1 and nothing sent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli

pytestmark = pytest.mark.timeout(180)
OK = [{"content": [{"type": "text", "text": "ok"}], "repeat": 20}]
SCRIPT = {"routes": [{"name": "main", "match": {"tools": True}, "turns": OK}, {"name": "side", "turns": OK}]}


def _mains(server: MockServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if isinstance(r["body"], dict) and r["body"].get("tools")]


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("namer", ["claude", "ours"])
def test_a_session_named_by_one_cli_resumes_by_name_in_the_other(claude: Path, claude_version: str, cli: Cli,
                                                                 tmp_path: Path, namer: str) -> None:  # fmt: skip
    cwd, config = tmp_path / "proj", tmp_path / "config"
    cwd.mkdir()
    rc.seed_home(config, [cwd], claude_version)
    with MockServer(SCRIPT) as server:
        env = rc.claude_env(config, server.base_url)
        real, ours = [str(claude)], cli.argv()
        first, second = (real, ours) if namer == "claude" else (ours, real)

        def run(argv: list[str], *args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*argv, "-p", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                                  check=False)  # fmt: skip

        assert run(first, "NAMED-FIRST", "-n", "Shared Work").returncode == 0
        assert run(first, "UNNAMED-OTHER").returncode == 0
        resumed = run(second, "-r", "shared work", "RESUMED-BY-NAME")
        assert resumed.returncode == 0, resumed.stderr
        sent = json.dumps(_mains(server)[-1]["messages"])
        assert "NAMED-FIRST" in sent and "RESUMED-BY-NAME" in sent and "UNNAMED-OTHER" not in sent
        before = len(server.requests)
        refused = {which: run(argv, "-r", "shared", "NEVER-SENT") for which, argv in (("claude", real), ("ours", ours))}
        assert {w: (p.returncode, p.stdout) for w, p in refused.items()} == {"claude": (1, ""), "ours": (1, "")}
        assert all(p.stderr.count("\n") == 1 and "shared" in p.stderr for p in refused.values()), refused
        assert len(server.requests) == before
