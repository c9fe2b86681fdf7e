"""The file watcher wakes on a write by another process, only for its own files, and never loses a change."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.errors import AgentTeamsError
from agentteams.store.fs.atomic_json import atomic_write_bytes
from agentteams.store.fs.watch import FileWatcher, wait_for_change

# The child writes its own clock reading (CLOCK_MONOTONIC: shared by every process) just before the write.
WRITER = """
import sys, time
from pathlib import Path
from agentteams.store.fs.atomic_json import atomic_write_bytes
atomic_write_bytes(Path(sys.argv[1]), str(time.monotonic()).encode())
"""


@pytest.fixture(params=["inotify", "poll"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "poll":
        monkeypatch.setenv("AGENTTEAMS_WATCH", "poll")
    else:
        monkeypatch.delenv("AGENTTEAMS_WATCH", raising=False)
    yield request.param


def _inbox(tmp_path: Path) -> Path:
    d = tmp_path / "inboxes"
    d.mkdir()
    inbox = d / "alice.json"
    inbox.write_bytes(b"[]")
    return inbox


@pytest.mark.solo  # times the product: alone under xdist (tests/support/solo.py)
def test_a_write_by_another_process_wakes_the_watcher(tmp_path: Path, mode: str) -> None:
    inbox = _inbox(tmp_path)
    with FileWatcher([inbox]) as watcher:
        assert watcher.mode == mode
        child = subprocess.Popen([sys.executable, "-c", WRITER, str(inbox)])
        try:
            assert watcher.wait(10.0)
            woke = time.monotonic()
        finally:
            assert child.wait(timeout=10) == 0
    latency = woke - float(inbox.read_text())
    assert 0 <= latency < 1.0, latency


def test_another_file_in_the_same_directory_does_not_wake(tmp_path: Path, mode: str) -> None:
    inbox = _inbox(tmp_path)
    with FileWatcher([inbox]) as watcher:
        atomic_write_bytes(inbox.with_name("bob.json"), b"[]")
        (inbox.parent / "alice.json.lock").touch()
        assert not watcher.wait(0.3)


def test_a_change_before_wait_is_still_reported_once(tmp_path: Path, mode: str) -> None:
    inbox = _inbox(tmp_path)
    with FileWatcher([inbox]) as watcher:
        atomic_write_bytes(inbox, b'[{"from": "bob"}]')
        assert watcher.wait(0)
        assert not watcher.wait(0.2)  # reported, and no longer pending
        atomic_write_bytes(inbox, b"[]")
        assert watcher.wait(5.0)


def test_a_file_created_later_wakes(tmp_path: Path, mode: str) -> None:
    inbox = tmp_path / "alice.json"
    with FileWatcher([inbox]) as watcher:
        assert not watcher.wait(0.1)
        atomic_write_bytes(inbox, b"[]")
        assert watcher.wait(5.0)


def test_any_of_several_files_wakes(tmp_path: Path, mode: str) -> None:
    (tmp_path / "b").mkdir()
    lead, peer = tmp_path / "lead.json", tmp_path / "b" / "peer.json"
    with FileWatcher([lead, peer]) as watcher:
        peer.write_bytes(b"[]")
        assert watcher.wait(5.0)


def test_timeout_returns_false(tmp_path: Path, mode: str) -> None:
    inbox = _inbox(tmp_path)
    start = time.monotonic()
    assert not wait_for_change([inbox], 0.2)
    assert 0.15 <= time.monotonic() - start < 2.0


def test_a_missing_directory_is_a_clear_error(tmp_path: Path, mode: str) -> None:
    with pytest.raises(AgentTeamsError, match="does not exist"):
        FileWatcher([tmp_path / "nope" / "alice.json"])


def test_close_releases_the_watcher(tmp_path: Path) -> None:
    watcher = FileWatcher([_inbox(tmp_path)])
    watcher.close()
    watcher.close()
    if watcher.mode == "inotify":
        with pytest.raises(AgentTeamsError):
            watcher.wait(0)


def test_without_inotify_it_falls_back_to_polling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTTEAMS_WATCH", raising=False)
    monkeypatch.setitem(sys.modules, "inotify_simple", None)  # the import now fails
    inbox = _inbox(tmp_path)
    with FileWatcher([inbox]) as watcher:
        assert watcher.mode == "poll"
        atomic_write_bytes(inbox, b'[{"from": "bob"}]')
        assert watcher.wait(5.0)
