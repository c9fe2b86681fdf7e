"""The fork server the launcher tests share: one per module (tests/support/forkserver_lab.py starts it)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from agentteams.procs.fork.client import ForkServer
from tests.support.forkserver_lab import short_private_dir, start_server


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    """A fork server for the module's tests, stopped after its last one."""
    directory = short_private_dir()
    fs = start_server(directory)
    yield fs
    fs.stop()
    shutil.rmtree(directory, ignore_errors=True)
