"""Write failures are warnings (issue 14, item 7): `agentteams -p` on a read-only transcript dir, a full config root
and under a file-size limit still answers, exits 0, and its last line says what was not saved, naming the path."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from agentteams.mockapi import MockServer
from tests.faults.disks import file_size_limit, fill, read_only, small_tmpfs
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger
from tests.support.team_run import Run, check_team_run, lead_env
from tests.support.team_script import say, team_scenario, tool

ANSWER = "All done despite the disk."
SCRIPT = {"routes": [{"name": "main", "match": {}, "turns": [
    tool("Bash", command="echo COMMAND-RAN"), tool("TaskCreate", subject="Ship it", description="d"), say(ANSWER),
]}]}  # fmt: skip


def headless(cli: Cli, cwd: Path, server: MockServer, preexec: Callable[[], None] | None = None) -> list[str]:
    """`agentteams -p` as a real process; asserts it answered and exited 0; its stderr lines."""
    env = {**cli.env(), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-key-0123456789"}
    proc = subprocess.run(
        cli.argv("-p", "go", "--dangerously-skip-permissions"), env=env, cwd=cwd, capture_output=True, text=True,
        timeout=120, check=False, preexec_fn=preexec,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr and "before the model answered" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ANSWER
    assert "COMMAND-RAN" in str(server.requests[1]["body"]["messages"][-1])  # the tool ran: work went on
    return proc.stderr.strip().splitlines()


def said_last(lines: list[str], *words: str) -> None:
    assert lines, "nothing said about the failed writes"
    assert lines[-1].startswith("agentteams: warning: transcript "), lines
    for w in words:
        assert w in lines[-1], lines[-1]
    # one warning, not one per entry; said again as the last line only when another warning came after it
    said = [line for line in lines if "transcript" in line]
    assert len(said) == 1 or (len(said) == 2 and lines.index(said[0]) < len(lines) - 2), lines


def test_a_read_only_transcript_dir_is_a_warning(cli: Cli, config_root: Path, tmp_path: Path,
                                                 ledger: FaultLedger) -> None:  # fmt: skip
    projects = config_root / "projects"
    projects.mkdir()
    with MockServer(SCRIPT) as server, read_only(projects):
        ledger.faults += 1
        ledger.writes += 1
        lines = headless(cli, tmp_path, server)
    said_last(lines, str(projects), "not saved")
    assert "Read-only file system" in lines[-1] or "Permission denied" in lines[-1]
    assert list(projects.rglob("*.jsonl")) == []


def test_a_full_config_root_is_a_warning(cli: Cli, config_root: Path, tmp_path: Path, ledger: FaultLedger) -> None:
    with small_tmpfs(config_root), MockServer(SCRIPT) as server:
        fill(config_root)
        ledger.faults += 1
        ledger.writes += 1
        lines = headless(cli, tmp_path, server)
        said_last(lines, str(config_root / "projects"), "No space left on device", "not saved")


def test_a_file_size_limit_is_a_warning_and_the_transcript_stays_whole(
    cli: Cli, config_root: Path, tmp_path: Path, ledger: FaultLedger
) -> None:
    with MockServer(SCRIPT) as server:
        ledger.faults += 1
        ledger.writes += 1
        lines = headless(cli, tmp_path, server, file_size_limit(2000))
    said_last(lines, "File too large", "not saved")
    [transcript] = (config_root / "projects").rglob("*.jsonl")
    assert transcript.stat().st_size <= 2000
    entries = transcript.read_bytes().split(b"\n")
    assert entries[-1] == b"" and all(json.loads(e) for e in entries[:-1])  # the entry that did not fit: cut back


def test_a_team_works_on_with_a_read_only_transcript_dir(
    cli: Cli, config_root: Path, tmp_path: Path, ledger: FaultLedger
) -> None:
    """The lead and its in-process teammates each fail to write their transcripts: the team's work is all done."""
    work = tmp_path / "work"
    work.mkdir()
    projects = config_root / "projects"
    projects.mkdir()
    with MockServer(team_scenario()) as server, read_only(projects):
        ledger.faults += 1
        proc = cli("-p", "go", "--dangerously-skip-permissions", "--teammate-mode", "in-process", cwd=work,
                   env=lead_env(config_root, server), timeout=120)  # fmt: skip
        run = Run(proc.returncode, proc.stdout, proc.stderr, server)
    check_team_run(run, work)
    ledger.writes += 3  # the three tasks' work, each logged once
    lines = proc.stderr.strip().splitlines()
    said_last(lines, str(projects), "not saved")
    assert list(projects.rglob("*.jsonl")) == []
