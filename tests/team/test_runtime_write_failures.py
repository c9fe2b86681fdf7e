"""The runtimes on a disk that refuses writes (issue 14, item 7): marking messages read fails with ENOSPC, yet the
lead keeps answering and a teammate serves each message once; one warning each, naming what was not saved."""

from __future__ import annotations

import errno
import logging
from pathlib import Path

import pytest

from agentteams.store import write_failures
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.paths import Layout
from tests.support.fake_model import FakeModel, text
from tests.support.runtime import WAIT, quick_polls, running_lead, running_teammate, teammate_rig
from tests.support.wait import wait_until


def disk_full(*_args: object) -> int:
    raise OSError(errno.ENOSPC, "No space left on device", "/full/inboxes/.x.json.tmp.0")


class Warnings:
    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        caplog.set_level(logging.WARNING, logger="agentteams")
        self.caplog = caplog

    def __call__(self) -> list[str]:
        return [r.getMessage() for r in self.caplog.records if r.levelno == logging.WARNING]


@pytest.fixture
def warnings(caplog: pytest.LogCaptureFixture) -> Warnings:
    write_failures.reset()
    return Warnings(caplog)


def test_a_teammate_serves_each_message_once_when_read_marks_fail(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch, warnings: Warnings
) -> None:
    quick_polls(monkeypatch)
    monkeypatch.setattr(Mailbox, "mark_delivered", disk_full)
    model = FakeModel([[text("First done.")], [text("Second done.")]])
    with running_teammate(teammate_rig(layout, tmp_path, model)) as rig:
        rig.from_lead("ONE")
        rig.wait_turns(1)
        rig.from_lead("TWO")
        rig.wait_turns(2)
        wait_until(lambda: rig.runtime.presence.state == "idle", WAIT, "alice idle again")
    assert model.calls == 2  # each message once, though both stay unread on disk
    assert "ONE" in model.user_text(0) and "TWO" in model.user_text(1) and "ONE" not in model.user_text(1)
    said = [w for w in warnings() if "read marks" in w]
    assert len(said) == 1 and "No space left on device" in said[0] and "alice@proj" in said[0]


def test_the_lead_keeps_answering_when_read_marks_fail(
    tmp_path: Path, layout: Layout, monkeypatch: pytest.MonkeyPatch, warnings: Warnings
) -> None:
    quick_polls(monkeypatch)
    monkeypatch.setattr(Mailbox, "mark_delivered", disk_full)
    model = FakeModel([[text("Noted.")], [text("Still here.")]])
    with running_lead(layout, tmp_path, model, "alice") as lead:
        lead.mailbox.send(lead.team, "team-lead", "a plain message from alice", sender="alice")
        wait_until(lambda: model.calls == 1, WAIT, "the lead's turn on alice's message")
        assert lead.runtime.wait_idle(WAIT), "the lead hung after its read marks failed"
        lead.runtime.submit("And now?")
        wait_until(lambda: model.calls == 2, WAIT, "the next turn")
        assert lead.runtime.wait_idle(WAIT)
        assert "a plain message from alice" not in model.user_text(1)  # not delivered twice
    assert sum("read marks of team-lead@proj" in w for w in warnings()) == 1
