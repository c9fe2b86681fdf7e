"""Tests marked `solo` (they bound how long the product takes) run alone when the suite is spread over pytest-xdist
workers: a solo test waits for the tests on other workers to end, and no new test starts until it is done.
A serial run is untouched. Registered by tests/conftest.py; a solo test followed by another on its worker hands its
turn on, so the other workers do not start tests between the two that the second would then wait for."""

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


_kept: tuple[int, int] | None = None  # a solo test's gate and room, kept for the solo test next on this worker


@contextmanager
def turn(where: Path | None, solo: bool, keep: bool = False) -> Iterator[None]:
    """A test's turn: shared with the other workers' ordinary tests, or (solo) the only one running. Every test
    passes the gate first and a solo one keeps it shut while it runs, so a stream of ordinary tests can't starve it.
    A solo turn with `keep` is not given up but handed to the next turn of this process, which must be solo."""
    global _kept
    if where is None:
        yield
        return
    if _kept is not None:
        (gate, room), _kept = _kept, None
    else:
        gate = os.open(where / "solo-gate.lock", os.O_RDWR | os.O_CREAT, 0o600)
        room = os.open(where / "solo-room.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(room, fcntl.LOCK_EX if solo else fcntl.LOCK_SH)
        if not solo:
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield
    finally:
        if solo and keep:
            _kept = (gate, room)
        else:
            os.close(room)  # closing drops the locks
            os.close(gate)


def _solo(item: pytest.Item | None) -> bool:
    return item is not None and item.get_closest_marker("solo") is not None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    # pytest-xdist has taken `nextitem` off this worker's queue already: it runs next, here, whatever is stolen
    with turn(_lock_dir(item.config), _solo(item), keep=_solo(nextitem)):
        return (yield)
