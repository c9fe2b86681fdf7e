"""scripts/bench_nodes.py still runs and measures every row on both stores (speed is judged by the script, not
here). It starts a node process and a redis-server of its own: `proc` and `redis`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.procs import child_env
from tests.support.repo import ROOT

pytestmark = [pytest.mark.proc, pytest.mark.redis]

SCRIPT = ROOT / "scripts" / "bench_nodes.py"
ROWS = ("local spawn returns", "local first request", "node spawn returns", "node first request",
        "node cut off: last beat -> gone")  # fmt: skip


def test_bench_nodes_measures_both_stores(config_root: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--spawns", "1"], env=child_env(config_root), capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("load average:") and lines[1].split()[-2:] == ["file", "redis"], proc.stdout
    table = {line[:44].strip(): [float(x) for x in line[44:].split()] for line in lines[2:]}
    assert list(table) == list(ROWS), proc.stdout
    assert all(len(v) == 2 and all(x > 0 for x in v) for v in table.values()), proc.stdout
    assert all(2500 < x < 6000 for x in table["node cut off: last beat -> gone"]), "the record outlived its ttl"
