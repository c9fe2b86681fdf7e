"""Where the repository's parts are, for tests that read them (README, scripts, the package, golden data): found
from this file, so a test module reads the same paths whichever folder of tests/ it sits in."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository: tests/support/repo.py is two folders below it
TESTS = ROOT / "tests"  # the golden data dirs are here: tests/golden, tests/golden-<version>
