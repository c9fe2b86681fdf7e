"""What one fault test did and what came of it (the `faults` marker): the counts its `ledger` fixture keeps for the
run's table (tests/faults/table.py), and the check that nothing was lost, duplicated, stranded, hung, run unasked or
touched outside the root."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FaultLedger:
    """What one fault test did and what came of it; its assertions use the same numbers."""

    test: str
    faults: int = 0  # faults injected: signals, planted links, broken locks, full disks, bad bytes
    writes: int = 0  # sends / writes attempted under the fault
    lost: int = 0  # messages or writes reported as done that did not land
    duplicates: int = 0  # messages delivered more than once
    outside: int = 0  # files outside the config root created, written, truncated or read
    stranded: int = 0  # tasks left owned by an agent that is gone, or in progress with nobody at them
    hangs: int = 0  # waits that ran past their deadline (a turn, a request, a tool call, a run)
    unasked: int = 0  # commands, servers or requests that ran before the person allowed them

    def check(self) -> None:
        bad = (self.lost, self.duplicates, self.outside, self.stranded, self.hangs, self.unasked)
        assert bad == (0, 0, 0, 0, 0, 0), self
