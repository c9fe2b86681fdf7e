"""Writes that may fail (store/write_failures.py): one warning per kind while it keeps failing, another once it has
worked in between; the summary a `-p` run ends on, unless that warning was its last line anyway."""

from __future__ import annotations

import errno
import logging
from collections.abc import Iterator

import pytest

from agentteams import diagnostics
from agentteams.store import write_failures as writefail


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    writefail.reset()
    yield
    writefail.reset()


def full(path: str) -> OSError:
    return OSError(errno.ENOSPC, "No space left on device", path)


def test_one_warning_per_kind_while_it_keeps_failing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentteams")
    for _ in range(3):
        writefail.failed("transcript", "/root/t.jsonl", full("/root/t.jsonl"))
    writefail.failed("presence", "/root/a.json", full("/root/.a.json.tmp.1"))
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        "transcript /root/t.jsonl not saved: No space left on device; going on without it",
        "presence /root/a.json not saved: No space left on device (/root/.a.json.tmp.1); going on without it",
    ]
    writefail.succeeded("transcript")
    writefail.failed("transcript", "/root/t.jsonl", full("/root/t.jsonl"))
    assert len(caplog.records) == 3  # it worked in between: the new failure is news


def test_the_summary_is_repeated_only_when_other_lines_came_after() -> None:
    assert writefail.summary() is None
    writefail.failed("transcript", "/root/t.jsonl", full("/root/t.jsonl"))
    assert writefail.summary_unless_last() is None  # our warning is the last line already
    diagnostics.warning("something else")
    assert writefail.summary_unless_last() == "transcript /root/t.jsonl not saved: No space left on device"
