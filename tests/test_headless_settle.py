"""A `-p` run with no team ends as soon as its answer is in, without spinning; one with a team still waits for its
teammates to settle, sleeping between looks (headless.wait_settled)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest

from agentteams.cli import headless
from agentteams.mockapi import MockServer
from tests.support.cli import Cli


class StubRuntime:
    """The lead runtime as wait_settled sees it, already idle: counts how often it is asked."""

    def __init__(self, team: str | None, members: list[str]) -> None:
        self.team = team
        self._members = members
        self.calls = 0

    def wait_idle(self, timeout: float | None = None) -> bool:
        self.calls += 1
        return True

    def members(self) -> list[str]:
        return self._members

    def settled(self) -> bool:
        self.calls += 1
        return True

    def wait_change(self, timeout: float) -> None:
        time.sleep(timeout)  # nothing changes: the whole timeout passes


def test_no_team_returns_at_once_without_spinning() -> None:
    runtime = StubRuntime(None, [])
    start = time.monotonic()
    headless.wait_settled(runtime)
    assert time.monotonic() - start < 0.05
    assert runtime.calls <= 2


def test_a_team_settles_for_the_settle_period_sleeping_between_looks() -> None:
    runtime = StubRuntime("crew", ["alice"])
    start = time.monotonic()
    headless.wait_settled(runtime)
    took = time.monotonic() - start
    assert headless.SETTLE_SECONDS <= took < headless.SETTLE_SECONDS + 1.0
    # one look per POLL_SECONDS, not a busy loop (the old one asked ~140 000 times in its second)
    assert runtime.calls <= 4 * (headless.SETTLE_SECONDS / headless.POLL_SECONDS + 2)


@pytest.fixture
def server() -> Iterator[MockServer]:
    spec = {"routes": [{"name": "main", "match": {}, "turns": [{"content": [{"type": "text", "text": "hello"}]}]}]}
    with MockServer(spec) as s:
        yield s


def test_p_without_a_team_exits_promptly_after_the_answer(cli: Cli, server: MockServer) -> None:
    env = cli.env()
    env.update(ANTHROPIC_API_KEY="test-key-settle-0123456789", ANTHROPIC_BASE_URL=server.base_url)
    proc = cli.popen("-p", "hi", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    server.wait_for_requests(1, timeout=60, where=lambda r: r["path"].startswith("/v1/messages"))
    asked = time.monotonic()
    out, err = proc.communicate(timeout=30)
    after = time.monotonic() - asked
    assert proc.returncode == 0, err
    assert out.strip() == "hello"
    # the answer is served at once: what is left is the turn's end, closing and the interpreter's exit (the
    # old fixed settle period alone took 1 s)
    assert after < 0.7, f"{after:.2f}s from the request to the exit"
