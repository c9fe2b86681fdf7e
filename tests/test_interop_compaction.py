"""Interop tier: a session compacted by agentteams goes on in the real `claude --resume` from our summary: it reads
our `compact_boundary` and summary entries as its own (the earlier turns are not resent)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from agentteams.agent.compaction import INSTRUCTION_MARK
from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.transcript_read import newest
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.test_e2e_headless import agentteams, work

__all__ = ["work"]  # a fixture, used by name
SUMMARY = "MOCKSUMMARY written for agentteams"


def test_the_real_cli_resumes_our_compacted_session_from_the_summary(
    claude: Path, claude_version: str, cli: Cli, config_root: Path, work: Path
) -> None:
    script = {"routes": [
        {"name": "summary", "match": {"last_prompt": INSTRUCTION_MARK}, "turns": [{"text": SUMMARY}]},
        rc.main_route("main", "MARK", ["Before answer.", "After answer."]),
    ]}  # fmt: skip
    with MockServer(script) as server:
        assert agentteams(cli, work, "-p", "MARK before", base_url=server.base_url).returncode == 0
        done = agentteams(cli, work, "-p", "-c", "/compact", base_url=server.base_url)
        assert done.returncode == 0, done.stderr
        found = newest(Layout(config_root), work)
        assert found is not None
        rc.seed_home(config_root, [work], claude_version)
        env = rc.claude_env(config_root, server.base_url)
        proc = subprocess.run([str(claude), "-p", "--dangerously-skip-permissions", "-r", found.session_id,
                               "MARK after"], cwd=work, env=env, capture_output=True, text=True, timeout=120,
                              check=False)  # fmt: skip
        assert proc.returncode == 0 and proc.stdout.strip() == "After answer.", proc.stderr
        mains = [r["body"] for r in server.requests if r.get("route") == "main"]
    said = json.dumps(mains[-1]["messages"])
    assert SUMMARY in said and "MARK after" in said and "MARK before" not in said
