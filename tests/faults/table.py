"""The fault suite's table at the end of the run: one row per test that used a `ledger`, gathered from the test
reports, so a run spread over pytest-xdist workers prints one table of all of them (registered by tests/conftest.py,
which the xdist controller loads; tests/faults/conftest.py is only loaded where the tests are collected)."""

from __future__ import annotations

from typing import Any

import pytest

LEDGER_PROPERTY = "fault_ledger"  # the user property a ledger's counts travel in (tests/faults/conftest.py)
COLUMNS = ("faults", "writes", "lost", "duplicates", "outside")

_ROWS: list[dict[str, Any]] = []
_printing = [True]  # False in an xdist worker: it sees its own reports too, but the controller prints the table


def pytest_configure(config: pytest.Config) -> None:
    _printing[0] = not hasattr(config, "workerinput")


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
        terminalreporter.write_line(f"{r['test']:<{width}}  " + "  ".join(f"{r[c]:>10}" for c in COLUMNS))
    totals = [sum(int(r[c]) for r in rows) for c in COLUMNS]
    terminalreporter.write_line(f"{'total':<{width}}  " + "  ".join(f"{t:>10}" for t in totals))
