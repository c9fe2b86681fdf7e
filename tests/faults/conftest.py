"""The fault suite (issue 14): every test here gets the `faults` marker and a `ledger` to count what it did —
faults injected, writes attempted, messages lost, duplicates, files outside the root touched — and the run ends
with one table of those counts (lost, duplicates and outside must be 0 in every row)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@dataclass
class FaultLedger:
    """What one fault test did and what came of it; its assertions use the same numbers."""

    test: str
    faults: int = 0  # faults injected: signals, planted links, broken locks, full disks, bad bytes
    writes: int = 0  # sends / writes attempted under the fault
    lost: int = 0  # messages or writes reported as done that did not land
    duplicates: int = 0  # messages delivered more than once
    outside: int = 0  # files outside the config root created, written, truncated or read

    def check(self) -> None:
        assert (self.lost, self.duplicates, self.outside) == (0, 0, 0), self


_LEDGERS: list[FaultLedger] = []


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.faults)


@pytest.fixture
def ledger(request: pytest.FixtureRequest) -> Iterator[FaultLedger]:
    """This test's counts: kept for the summary table, and checked (0 lost, 0 duplicates, 0 outside) at its end."""
    entry = FaultLedger(request.node.name)
    _LEDGERS.append(entry)
    yield entry
    entry.check()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _LEDGERS:
        return
    names = [f.name for f in fields(FaultLedger)]
    width = max(len(e.test) for e in _LEDGERS)
    terminalreporter.section("fault suite")
    terminalreporter.write_line(f"{'test':<{width}}  " + "  ".join(f"{n:>10}" for n in names[1:]))
    for e in _LEDGERS:
        terminalreporter.write_line(f"{e.test:<{width}}  " + "  ".join(f"{getattr(e, n):>10}" for n in names[1:]))
    totals = [sum(getattr(e, n) for e in _LEDGERS) for n in names[1:]]
    terminalreporter.write_line(f"{'total':<{width}}  " + "  ".join(f"{t:>10}" for t in totals))
