"""A send returns only once its message survives a power cut: the new inbox's temp file is fsynced before the rename
(never a half-written inbox), and the inbox directory is fsynced after it (the rename itself); the recipient sees the
message at the rename, before that directory sync. A sender whose message another sender committed syncs too."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs import safe_paths
from agentteams.store.fs.locking import FileLock
from agentteams.store.paths import Layout
from tests.support.wait import wait_until

TEAM = "durable"


@pytest.fixture
def mailbox(layout: Layout, tmp_path: Path) -> Mailbox:
    teams = TeamStore(layout)
    teams.create(TEAM, cwd=str(tmp_path))
    teams.add_member(TEAM, NewMember(name="bob", cwd=str(tmp_path)))
    return Mailbox(layout, teams)


def _target(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


def test_a_send_syncs_the_file_then_renames_then_syncs_the_directory(
    mailbox: Mailbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox = mailbox.inbox_path(TEAM, "bob")
    log: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        path = _target(fd)
        seen = "with the message" if path == str(inbox.parent) and b"hello" in inbox.read_bytes() else ""
        log.append(("fsync", path + seen))
        real_fsync(fd)

    def replace(src: str | Path, dst: str | Path) -> None:
        log.append(("replace", str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    mailbox.send(TEAM, "bob", "hello", sender="team-lead")
    commit = [i for i, (op, path) in enumerate(log) if op == "replace" and path == str(inbox)][-1]
    assert log[commit - 1][0] == "fsync" and ".tmp." in log[commit - 1][1]  # the temp file, before its rename
    # the directory last, and the recipient could already read the message then
    assert log[-1] == ("fsync", str(inbox.parent) + "with the message")


def test_a_sender_whose_message_another_committed_waits_for_the_directory_sync(
    mailbox: Mailbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    inbox = mailbox.inbox_path(TEAM, "bob")
    mailbox.send(TEAM, "bob", "first", sender="team-lead")  # the inbox exists
    synced: list[str] = []
    real_sync = safe_paths.sync_dir

    def sync_dir(path: Path) -> None:
        synced.append(threading.current_thread().name)
        real_sync(path)

    monkeypatch.setattr(safe_paths, "sync_dir", sync_dir)
    commits: list[str] = []
    real_flush = Mailbox._flush_spool

    def flush(self: Mailbox, path: Path) -> None:
        commits.append(threading.current_thread().name)
        real_flush(self, path)

    monkeypatch.setattr(Mailbox, "_flush_spool", flush)
    lock = FileLock(inbox)
    lock.acquire()  # both senders spool, then queue behind this lock
    senders = [
        threading.Thread(target=mailbox.send, args=(TEAM, "bob", f"m{i}"), kwargs={"sender": "team-lead"}, name=f"s{i}")
        for i in range(2)
    ]
    for s in senders:
        s.start()
    spool = inbox.with_name(f".{inbox.name}.spool")
    wait_until(
        lambda: spool.exists() and b'"m0"' in spool.read_bytes() and b'"m1"' in spool.read_bytes(),
        10.0,
        "both messages spooled",
    )
    lock.release()
    for s in senders:
        s.join(10.0)
    assert sorted(m.text for m in mailbox.read_live(TEAM, "bob")) == ["first", "m0", "m1"]
    assert len(commits) == 1  # one committed both (group commit) ...
    assert sorted(synced) == ["s0", "s1"]  # ... and each sender synced the directory before returning


def test_a_directory_that_will_not_sync_is_reported_and_the_message_stays_delivered(
    mailbox: Mailbox, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(path: Path) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(safe_paths, "sync_dir", broken)
    mailbox.send(TEAM, "bob", "hello", sender="team-lead")
    assert [m.text for m in mailbox.read_live(TEAM, "bob")] == ["hello"]
    assert "the message is delivered, not yet on disk" in caplog.text


def test_a_store_read_leaves_the_access_time_alone(tmp_path: Path) -> None:
    """Under `relatime` the first read of a just-replaced inbox would write its inode (a journal update that can wait
    behind a sender's fsync); the store reads with O_NOATIME."""
    inbox = tmp_path / "bob.json"
    inbox.write_bytes(b"[]")
    st = inbox.stat()
    os.utime(inbox, ns=(st.st_mtime_ns - 10**11, st.st_mtime_ns))  # accessed before it was modified
    assert safe_paths.read_bytes(inbox) == b"[]"
    assert inbox.stat().st_atime_ns == st.st_mtime_ns - 10**11
