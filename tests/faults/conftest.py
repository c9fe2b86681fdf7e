"""The fault suite (issue 14): every test here gets the `faults` marker and a `ledger` to count what it did —
faults injected, writes attempted, messages lost, duplicates, files outside the root touched — and the run ends
with one table of those counts (lost, duplicates and outside must be 0 in every row)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.faults.table import LEDGER_PROPERTY
from tests.support.fault_ledger import FaultLedger

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.faults)


@pytest.fixture
def ledger(request: pytest.FixtureRequest) -> Iterator[FaultLedger]:
    """This test's counts: kept for the summary table, and checked (0 lost, 0 duplicates, 0 outside) at its end."""
    entry = FaultLedger(request.node.name)
    yield entry
    # carried on the teardown report, so the table (tests/faults/table.py) gets it from an xdist worker too;
    # the collection index keeps the rows in the same order however the tests were spread over workers
    order = request.session.items.index(request.node) if request.node in request.session.items else -1
    request.node.user_properties.append((LEDGER_PROPERTY, {"order": order, **asdict(entry)}))
    entry.check()
