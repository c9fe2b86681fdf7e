"""Interop tier: a session compacted by agentteams goes on in the real `claude --resume` from our summary: it reads
our `compact_boundary` and summary entries as its own (the earlier turns are not resent)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agentteams.agent.compaction import INSTRUCTION_MARK
from agentteams.mockapi import MockServer
from agentteams.store.paths import Layout
from agentteams.store.transcripts.reader import newest
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import agentteams, notes_work

__all__ = ["work"]  # a fixture, used by name
SUMMARY = "MOCKSUMMARY written for agentteams"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return notes_work(tmp_path)  # notes.txt in draft (tests/support/headless.py), not the conftest's empty dir


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


def _steps(run: Callable[[list[str]], subprocess.CompletedProcess[str]], settings: Path) -> list[tuple[int, str]]:
    """A turn, `/compact` stopped by a PreCompact hook, `/compact` without it, `/compact` with nothing left."""
    hook = {"PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "echo NOPE >&2; exit 2"}]}]}
    seeded = json.loads(settings.read_text()) if settings.exists() else {}
    settings.write_text(json.dumps({**seeded, "hooks": hook}))
    out = []
    for n, argv in enumerate((["MARK before"], ["-c", "/compact"], ["-c", "/compact"], ["-c", "/compact"])):
        if n == 2:
            settings.write_text(json.dumps(seeded))
        proc = run(["-p", "--dangerously-skip-permissions", *argv])
        out.append((proc.returncode, proc.stdout.strip()))
    return out


@pytest.mark.parametrize("claude_version", [rc.DEFAULT])
def test_print_compact_answers_as_the_real_cli(
    claude: Path, claude_version: str, cli: Cli, config_root: Path, work: Path, tmp_path: Path
) -> None:
    script = {"routes": [rc.main_route("main", "MARK", ["Before answer.", "<summary>MOCKSUMMARY</summary>"])]}
    with MockServer(script) as ours_server, MockServer(script) as real_server:
        env = {**cli.env(), "ANTHROPIC_API_KEY": rc.API_KEY, "ANTHROPIC_BASE_URL": ours_server.base_url}
        ours = _steps(lambda argv: cli(*argv, env=env, cwd=work, timeout=120), config_root / "settings.json")
        real_config, real_work = tmp_path / "real-config", tmp_path / "real-work"
        real_work.mkdir()
        rc.seed_home(real_config, [real_work], claude_version)
        real_env = rc.claude_env(real_config, real_server.base_url)
        real = _steps(lambda argv: subprocess.run([str(claude), *argv], cwd=real_work, env=real_env,
                                                  capture_output=True, text=True, timeout=120, check=False),
                      real_config / "settings.json")  # fmt: skip
        summaries = [len([r for r in s.requests if r.get("route") == "main"]) for s in (ours_server, real_server)]
    assert real == [(0, "Before answer."), (0, "Compaction blocked by PreCompact hook: [echo NOPE >&2; exit 2]: NOPE"),
                    (0, ""), (0, "Not enough messages to compact.")]  # fmt: skip
    assert ours == real and summaries == [2, 2]  # one turn, one summary each
