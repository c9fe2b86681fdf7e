"""Tests marked `solo` (they bound how long the product takes) run alone when the suite is spread over pytest-xdist
workers: a solo test waits for the tests on other workers to end, and no new test starts until it is done.
A serial run is untouched. Registered by tests/conftest.py."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _lock_dir(config: pytest.Config) -> Path | None:
    """Where this run's workers keep their locks: the run's base temp dir, the parent of each worker's own
    (pytest-xdist gives each worker `<basetemp>/popen-gwN`); None outside an xdist worker."""
    if not hasattr(config, "workerinput") or not config.option.basetemp:
        return None
    return Path(config.option.basetemp).parent


@contextmanager
def turn(where: Path | None, solo: bool) -> Iterator[None]:
    """A test's turn: shared with the other workers' ordinary tests, or (solo) the only one running. Every test
    passes the gate first and a solo one keeps it shut while it runs, so a stream of ordinary tests can't starve it."""
    if where is None:
        yield
        return
    gate = os.open(where / "solo-gate.lock", os.O_RDWR | os.O_CREAT, 0o600)
    room = os.open(where / "solo-room.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(room, fcntl.LOCK_EX if solo else fcntl.LOCK_SH)
        if not solo:
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield
    finally:
        os.close(room)  # closing drops the locks
        os.close(gate)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    with turn(_lock_dir(item.config), item.get_closest_marker("solo") is not None):
        return (yield)
