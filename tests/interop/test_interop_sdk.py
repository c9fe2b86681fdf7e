"""Interop tier, the Agent SDK: programs written with the real Python `claude-agent-sdk` (tests/support/sdk_programs.py)
run against the newest real `claude` and against ours, each against its own scripted server, and observe the same:
the messages they get, what their callbacks are asked, the files the agent leaves, what the model is told."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support import sdk_control_programs as controls
from tests.support import sdk_programs as sdk
from tests.support import sdk_session_programs as sessions
from tests.support import sdk_turn_programs as turns
from tests.support.cli import Cli

pytestmark = pytest.mark.timeout(300)
MARKERS = ("DENIED-BY-PROGRAM", "HOOK-SAID-NO", "SUM=5")  # words a program gives that the model must be told


def _outcome(seen: sdk.Seen) -> dict[str, object]:
    """What the program's author sees. The models asked for count once each: the real CLI retries a 400 five times,
    ours does not retry a request the API refused as malformed."""
    told = [[m for m in MARKERS if m in text] for text in seen.tool_results]
    return {"kinds": seen.kinds, "results": seen.results, "asked": seen.asked, "hooks": seen.hooks,
            "files": seen.files, "told": told, "raised": seen.raised, "models": list(dict.fromkeys(seen.models)),
            "streamed": seen.streamed, "stream_types": seen.stream_types, "saved": seen.saved,
            "agents": seen.agents, "attributed": seen.attributed, "order": seen.order, "rewound": seen.rewound,
            "offered": sorted(seen.offered) if len(seen.offered) < 5 else "many"}  # fmt: skip


def _drive(name: str, cli: Path, env: dict[str, str], work: Path) -> sdk.Seen:
    with MockServer(sdk.script_for(name, work)) as server:
        return sdk.run(name, sdk.Where(cli, {**env, "ANTHROPIC_BASE_URL": server.base_url}, work, server))


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("name", list(sdk.PROGRAMS))
def test_an_sdk_program_sees_the_same_with_ours_as_with_the_real_cli(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path, name: str
) -> None:
    real_work, our_work = tmp_path / "real" / "work", tmp_path / "ours" / "work"
    real_work.mkdir(parents=True)
    our_work.mkdir(parents=True)
    rc.seed_home(tmp_path / "real" / "cfg", [real_work], claude_version)
    real_env = rc.claude_env(tmp_path / "real" / "cfg", "unused")
    our_env = {**rc.claude_env(tmp_path / "ours" / "cfg", "unused"), "PYTHONPATH": str(rc.ROOT)}
    real = _drive(name, claude, real_env, real_work)
    ours = _drive(name, Path(cli.argv()[0]), our_env, our_work)
    assert _outcome(ours) == _outcome(real), f"ours: {ours}\nreal: {real}"


def _both(program: Any, script: dict[str, Any], claude: Path, version: str, cli: Cli, tmp_path: Path) -> dict[str, Any]:
    """What a program returns, run against the real CLI and against ours (each with the script's server)."""
    seen = {}
    for label, where in (("real", claude), ("ours", Path(cli.argv()[0]))):
        work = tmp_path / label / "work"
        work.mkdir(parents=True)
        rc.seed_home(tmp_path / label / "cfg", [work], version)
        with MockServer(script) as server:
            env = {**rc.claude_env(tmp_path / label / "cfg", server.base_url), "PYTHONPATH": str(rc.ROOT)}
            seen[label] = sdk.run_program(program, sdk.Where(where, env, work, server))
    return seen


# programs that report their own record: sessions kept and reopened; a turn's origin echoed, which waiting prompts go
# in together, /clear's reset and new session
RECORDING = [(programs, name) for programs in (sessions, turns) for name in programs.PROGRAMS]


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize(("programs", "name"), RECORDING, ids=[name for _, name in RECORDING])
def test_a_program_s_own_record_is_the_same_with_ours(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path, programs: Any, name: str
) -> None:
    seen = _both(programs.PROGRAMS[name], programs.SCRIPTS[name], claude, claude_version, cli, tmp_path)
    assert seen["ours"] == seen["real"]


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("name", list(controls.PROGRAMS))
def test_a_program_s_control_requests_do_the_same_with_ours(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path, name: str
) -> None:
    seen = {}
    for label, where in (("real", claude), ("ours", Path(cli.argv()[0]))):
        work = tmp_path / label / "work"
        work.mkdir(parents=True)
        rc.seed_home(tmp_path / label / "cfg", [work], claude_version)
        with MockServer(controls.SCRIPTS[name]) as server:
            env = {**rc.claude_env(tmp_path / label / "cfg", server.base_url), "PYTHONPATH": str(rc.ROOT)}
            seen[label] = sdk.run_program(controls.PROGRAMS[name], sdk.Where(where, env, work, server))
    assert seen["ours"] == seen["real"]


@ccv.only(rc.NEWEST)
def test_the_sdk_benchmark_runs_one_round_of_each(claude: Path, claude_version: str, cli: Cli, tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(rc.ROOT / "scripts" / "bench_sdk.py"), "--rounds", "1", "--json",
                           str(out)], capture_output=True, text=True, timeout=240, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    figures = json.loads(out.read_text())
    assert set(figures["medians_ms"]) == {"agentteams (cold)", f"claude {claude_version}"}
    assert all(ms > 0 for ms in figures["medians_ms"].values()) and "ours / real" in proc.stdout
