"""A `-p` run with no team ends as soon as its answer is in, without spinning; one with a team still waits for its
teammates to settle, sleeping between looks (headless.wait_settled). How fast a `-p` run ends is a figure for
scripts/bench_startup.py, not a timed test."""

from __future__ import annotations

import time

from agentteams.run import headless


class StubRuntime:
    """The lead runtime as wait_settled sees it, already idle: counts how often it is asked."""

    def __init__(self, team: str | None, members: list[str]) -> None:
        self.team = team
        self._members = members
        self.calls = 0
        self.sleeps = 0  # waits for a change: one per look at a team's files

    def wait_idle(self, timeout: float | None = None) -> bool:
        self.calls += 1
        return True

    def members(self) -> list[str]:
        return self._members

    def settled(self) -> bool:
        self.calls += 1
        return True

    def wait_change(self, timeout: float) -> None:
        self.sleeps += 1
        time.sleep(timeout)  # nothing changes: the whole timeout passes


def test_no_team_returns_at_once_without_spinning() -> None:
    runtime = StubRuntime(None, [])
    headless.wait_settled(runtime)
    assert runtime.calls <= 2 and runtime.sleeps == 0  # one look that it is idle; no settle period, no loop


def test_a_team_settles_for_the_settle_period_sleeping_between_looks() -> None:
    runtime = StubRuntime("crew", ["alice"])
    start = time.monotonic()
    headless.wait_settled(runtime)
    assert time.monotonic() - start >= headless.SETTLE_SECONDS  # a team's run still waits for it to settle
    # one look per POLL_SECONDS, sleeping in between, not a busy loop (the old one asked ~140 000 times a second)
    looks = headless.SETTLE_SECONDS / headless.POLL_SECONDS
    assert runtime.sleeps <= looks + 2 and runtime.calls <= 4 * (looks + 2)
