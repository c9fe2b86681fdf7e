"""The fault suite's own bookkeeping: a ledger that counts a loss fails its test."""

from __future__ import annotations

import pytest

from tests.support.fault_ledger import FaultLedger


def test_a_ledger_with_a_lost_message_fails() -> None:
    entry = FaultLedger("example", faults=1, writes=10, lost=1)
    with pytest.raises(AssertionError):
        entry.check()
    FaultLedger("clean", faults=3, writes=30).check()


def test_the_ledger_fixture_counts(ledger: FaultLedger, request: pytest.FixtureRequest) -> None:
    ledger.faults, ledger.writes = 1, 1
    assert request.node.get_closest_marker("faults") is not None
