"""A background session's record is changed under its lock: `stop`'s "stopped" is never lost under the session's own
report of its turns (a read-modify-write of the one would otherwise interleave with the other's)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentteams.run.background import JobReporter
from agentteams.store import jobs
from agentteams.store.jobs import Job
from agentteams.store.paths import Layout

JOB_ID = "0badc0de"


def _job(layout: Layout) -> Job:
    job = Job(JOB_ID, JOB_ID + "-0000-4000-8000-000000000000", "/tmp", "task", "working", jobs.OURS, jobs.iso_now())
    return jobs.write_job(layout, job)


def test_an_update_waits_for_the_one_in_progress(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "claude")
    _job(layout)
    inside, release = threading.Event(), threading.Event()

    def report(job: Job) -> dict[str, object]:  # the session read "working" and is about to write "idle"
        inside.set()
        assert release.wait(10.0)
        return {"state": "idle"}

    reporter = threading.Thread(target=jobs.update_job, args=(layout, JOB_ID, report), daemon=True)
    reporter.start()
    assert inside.wait(10.0)
    stopper = threading.Thread(target=jobs.update_job, args=(layout, JOB_ID, lambda _j: {"state": "stopped"}),
                               daemon=True)  # fmt: skip
    stopper.start()
    stopper.join(0.3)
    assert stopper.is_alive(), "stop wrote while the session's report was between its read and its write"
    release.set()
    reporter.join(10.0)
    stopper.join(10.0)
    assert not reporter.is_alive() and not stopper.is_alive()
    assert (jobs.read_job(layout, JOB_ID) or pytest.fail("no record")).state == "stopped"


def test_the_session_leaves_a_stopped_record_stopped(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "claude")
    _job(layout)
    reporter = JobReporter(layout, JOB_ID)
    reporter.set("idle")
    assert (jobs.read_job(layout, JOB_ID) or pytest.fail("no record")).raw["tempo"] == "idle"
    jobs.update_job(layout, JOB_ID, lambda _j: {"state": "stopped"})
    reporter.set("working")
    reporter.ended()
    assert (jobs.read_job(layout, JOB_ID) or pytest.fail("no record")).state == "stopped"


def test_no_record_no_update(tmp_path: Path) -> None:
    assert jobs.update_job(Layout(tmp_path / "claude"), JOB_ID, lambda _j: {"state": "stopped"}) is None
    assert not (tmp_path / "claude" / "jobs" / JOB_ID / "state.json").exists()


def test_a_blank_key_names_no_session(tmp_path: Path) -> None:
    from agentteams.run.background import BackgroundError, find

    layout = Layout(tmp_path / "claude")
    _job(layout)  # the only one: a blank key held in every name would pick it
    for key in ("", "  "):
        with pytest.raises(BackgroundError, match="name a background session"):
            find(layout, key)
    assert find(layout, JOB_ID).id == JOB_ID
