"""The suite run in parallel (pytest-xdist, as the README's test command does): the fault table is still one table
of every worker's rows, and the tier audit still fails an unmarked test that starts tmux inside a worker."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import redislab
from tests.support.redislab import RedisServer
from tests.support.repo import ROOT

FAULTS = ["tests/faults/test_ledger.py", "tests/faults/test_name_collisions.py"]


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # an outer xdist run's worker variables must not make the inner controller think it is a worker
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={tmp_path}", *args]
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False)


def _table(output: str) -> list[str]:
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("=") and " fault suite " in line]
    assert len(starts) == 1, output[-3000:]
    end = next(i for i in range(starts[0] + 1, len(lines)) if lines[i].startswith("total "))
    return [line for line in lines[starts[0] + 1 : end + 1] if line]  # verbose output puts a blank line first


def test_ci_runs_the_readme_test_command_and_it_is_parallel() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"Run the tests.*?```sh\n(.*?)```", readme, re.S)
    assert block is not None, "README: no test command after 'Run the tests'"
    command = block.group(1).strip()
    assert "\n" not in command and command.startswith("python -m pytest -q -n "), command
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    runs = [line for line in lines if "pytest" in line and not line.lstrip().startswith(("#", "echo"))]
    # besides it, only a collection that runs no test (it writes the test modules' bytecode before the workers start)
    assert [line for line in runs if " --collect-only " not in line] == [command], runs


@pytest.mark.proc  # runs pytest twice, a few seconds each
def test_the_fault_table_is_one_table_of_every_workers_rows(tmp_path: Path) -> None:
    fast = ["-m", "not tmux and not proc and not interop", *FAULTS]
    serial = _pytest(tmp_path / "serial", "-n", "0", *fast)
    parallel = _pytest(tmp_path / "parallel", "-n", "3", "-vv", *fast)
    assert serial.returncode == 0 and parallel.returncode == 0, serial.stdout[-2000:] + parallel.stdout[-2000:]
    workers = {line.split()[0] for line in parallel.stdout.splitlines() if line.startswith("[gw")}
    assert len(workers) > 1, parallel.stdout[:3000]  # the rows really came from more than one worker
    rows = _table(serial.stdout)
    # the header, one row per ledger test (10 here), the totals; the same rows in the same order either way
    assert len(rows) == 12 and rows[1].startswith("test_the_ledger_fixture_counts "), rows
    assert _table(parallel.stdout) == rows


PROBE = """
import subprocess

import pytest

from tests.support import redislab
from tests.support.redislab import RedisServer


def test_unmarked_starts_tmux():
    subprocess.run(["tmux", "-V"], capture_output=True, check=False)


@pytest.mark.tmux
def test_marked_starts_tmux():
    subprocess.run(["tmux", "-V"], capture_output=True, check=False)
"""


@pytest.mark.proc
def test_the_tier_audit_fails_an_unmarked_test_starting_tmux_in_a_worker(tmp_path: Path) -> None:
    probe = tmp_path / "probe" / "test_probe.py"
    probe.parent.mkdir()
    probe.write_text(PROBE)
    # the project's settings and its conftest (as a plugin: the probe lives outside tests/), two workers
    proc = _pytest(tmp_path / "base", "-c", "pyproject.toml", "-p", "tests.conftest", "-n", "2", str(probe))
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "1 failed, 1 passed" in proc.stdout, proc.stdout[-3000:]
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 1 and "test_unmarked_starts_tmux" in failed[0], proc.stdout[-3000:]
    assert "a test without the `tmux` marker started" in proc.stdout, proc.stdout[-3000:]


SOLO_PROBE = """
import os
import time
from pathlib import Path

import pytest

DIR = Path(os.environ["PROBE_DIR"])
maybe_solo = pytest.mark.solo if os.environ["PROBE_SOLO"] == "1" else (lambda f: f)


def run_watching(me, other):
    (DIR / f"{me}-start").touch()
    window = time.monotonic() + 3.0
    while time.monotonic() < window:  # the other test must not be running at any moment of this window
        assert not ((DIR / f"{other}-start").exists() and not (DIR / f"{other}-end").exists()), "overlap"
        time.sleep(0.02)
    (DIR / f"{me}-end").touch()


def test_ordinary():
    run_watching("ordinary", "solo")


@maybe_solo
def test_solo():
    run_watching("solo", "ordinary")
"""


@pytest.mark.proc
@pytest.mark.parametrize("solo", [True, False], ids=["marked", "unmarked"])
def test_a_solo_test_runs_while_no_other_test_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, solo: bool) -> None:
    probe = tmp_path / "probe" / "test_probe.py"
    probe.parent.mkdir()
    probe.write_text(SOLO_PROBE)
    monkeypatch.setenv("PROBE_DIR", str(probe.parent))
    monkeypatch.setenv("PROBE_SOLO", "1" if solo else "0")
    proc = _pytest(tmp_path / "base", "-c", "pyproject.toml", "-p", "tests.conftest", "-n", "2", str(probe))
    # unmarked, the two run side by side on the two workers and see each other (the probe can fail)
    assert ("2 passed" in proc.stdout) is solo and ("overlap" in proc.stdout) is not solo, proc.stdout[-3000:]


def test_a_server_on_the_port_that_is_not_ours_is_not_taken_for_ours(redis_server: RedisServer, tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert redis_server.answers()
        # another test's server on "our" port: it answers INFO, with another process id
        assert not RedisServer(redis_server.port, tmp_path, other).answers()
    finally:
        other.kill()
        other.wait()


def test_a_port_taken_before_the_server_binds_it_is_left_for_another(
    redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ports = iter([redis_server.port, redislab.free_port()])  # the first "free" port is the other server's
    monkeypatch.setattr(redislab, "free_port", lambda: next(ports))
    server = redislab.start(tmp_path / "second")
    try:
        assert server.port != redis_server.port and server.answers() and redis_server.answers()
    finally:
        server.stop()
