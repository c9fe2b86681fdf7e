"""The fault suite's home (issue 14): every test here gets the `faults` marker; its `ledger` fixture, which counts
what a test did (faults injected, writes) and what came of it (lost, duplicated, outside, stranded, hung, unasked:
all 0), and the run's table are in tests/faults/table.py, for fault tests elsewhere too."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.faults)
