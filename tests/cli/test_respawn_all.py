"""`agentteams respawn --all` tries every background session of ours: one that cannot restart is one line on stderr
and the others are still restarted; the command exits 1 if any failed."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from agentteams.cli.commands.respawn import respawn
from agentteams.run import background
from agentteams.store import jobs
from agentteams.store.jobs import Job


def _job(job_id: str) -> background.Listed:
    return background.Listed(Job(job_id, f"s-{job_id}", "/tmp", "hi", "idle", jobs.OURS, jobs.iso_now()), "idle")


def test_respawn_all_tries_each_and_says_each_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:  # fmt: skip
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    monkeypatch.setattr(background, "listing", lambda _layout: [_job("aaaa1111"), _job("bbbb2222"), _job("cccc3333")])
    tried: list[str] = []

    def restart(_layout: object, job: Job) -> Job:
        tried.append(job.id)
        if job.id == "aaaa1111":
            raise background.BackgroundError(f"cannot restart {job.id}: tmux: no server")
        if job.id == "bbbb2222":
            raise PermissionError(13, "Permission denied")
        return job

    monkeypatch.setattr(background, "respawn", restart)
    with pytest.raises(typer.Exit) as ended:
        respawn(None, every=True)
    assert ended.value.exit_code == 1
    assert tried == ["aaaa1111", "bbbb2222", "cccc3333"]
    out, err = capsys.readouterr()
    assert out == "respawned cccc3333\n"
    assert err.splitlines() == ["agentteams: error: cannot restart aaaa1111: tmux: no server",
                                "agentteams: error: cannot restart bbbb2222: Permission denied"]  # fmt: skip
