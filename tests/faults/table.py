"""The fault suite: the `ledger` fixture any test that injects a fault takes (which marks it `faults`, so
`pytest -m faults` runs the whole suite wherever its tests live), and the table at the end of the run: one row per
test that used a ledger, gathered from the test reports, so a run spread over pytest-xdist workers prints one table
(registered by tests/conftest.py, which the xdist controller loads)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import pytest

from tests.support.fault_ledger import FaultLedger

LEDGER_PROPERTY = "fault_ledger"  # the user property a ledger's counts travel in
COLUMNS = ("faults", "writes", "lost", "duplicates", "outside", "stranded", "hangs", "unasked")

_ROWS: list[dict[str, Any]] = []
_printing = [True]  # False in an xdist worker: it sees its own reports too, but the controller prints the table


def pytest_configure(config: pytest.Config) -> None:
    _printing[0] = not hasattr(config, "workerinput")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "ledger" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.faults)


@pytest.fixture
def ledger(request: pytest.FixtureRequest) -> Iterator[FaultLedger]:
    """This test's counts: kept for the summary table, and checked (every count of harm 0) at its end."""
    entry = FaultLedger(request.node.name)
    yield entry
    # carried on the teardown report, so the table gets it from an xdist worker too; the collection index keeps the
    # rows in the same order however the tests were spread over workers
    order = request.session.items.index(request.node) if request.node in request.session.items else -1
    request.node.user_properties.append((LEDGER_PROPERTY, {"order": order, **asdict(entry)}))
    entry.check()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "teardown" or not _printing[0]:
        return
    _ROWS.extend(value for name, value in report.user_properties if name == LEDGER_PROPERTY and isinstance(value, dict))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _ROWS:
        return
    rows = sorted(_ROWS, key=lambda r: int(r["order"]))
    width = max(len(str(r["test"])) for r in rows)
    terminalreporter.section("fault suite")
    terminalreporter.write_line(f"{'test':<{width}}  " + "  ".join(f"{c:>10}" for c in COLUMNS))
    for r in rows:
        terminalreporter.write_line(f"{r['test']:<{width}}  " + "  ".join(f"{r.get(c, 0):>10}" for c in COLUMNS))
    totals = [sum(int(r.get(c, 0)) for r in rows) for c in COLUMNS]
    terminalreporter.write_line(f"{'total':<{width}}  " + "  ".join(f"{t:>10}" for t in totals))
