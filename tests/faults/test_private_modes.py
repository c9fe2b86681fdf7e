"""Private files (issue 14, item 9): whatever our processes create under the config root — config, inboxes, spools,
lock-queue files, history, tasks, presence, transcripts and their directories — is the user's alone (files 0600,
directories 0700, our lock dirs 01700), whatever the umask; a file another program made is replaced privately."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams.store.file.store import FileStore
from agentteams.store.fs.locking import FileLock, lock_dir_for
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence
from agentteams.store.transcripts.writer import Transcript
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The common umask 022 (what left everything 0644/0755), for this process and the CLI processes it starts."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in sorted(root.rglob("*"))}


def test_everything_we_create_is_private(
    open_umask: None, cli: Cli, config_root: Path, tmp_path: Path, ledger: FaultLedger
) -> None:
    runs = [
        ("team", "create", "t"),
        ("msg", "send", "t", "team-lead", "hello"),
        ("task", "create", "t", "first"),
        ("task", "update", "t", "1", "--status", "in_progress"),
    ]
    for run in runs:
        ledger.writes += 1
        assert cli(*run).returncode == 0, run
    layout = Layout(config_root)
    store = FileStore(layout)
    for i in range(22):  # beyond what the live inbox keeps: marking them read starts the history file
        store.mail.send("t", "team-lead", f"m{i}", sender="alice")
    store.mail.mark_delivered("t", "team-lead", store.mail.read_live("t", "team-lead"))
    store.presence.write("t", "alice", Presence(pid=os.getpid(), session_id="s", backend="process"))
    Transcript(layout.transcript_file(tmp_path, "sess"), "sess", cwd=str(tmp_path)).prompt("team-lead", "hi")
    ledger.writes += 25

    modes = _modes(config_root)
    assert "teams/t/inboxes/team-lead.history.jsonl" in modes and "teams/t/agents/alice.json" in modes
    assert "teams/t/inboxes/.team-lead.json.flock" in modes and "tasks/t/.1.json.flock" in modes
    shared = {name: oct(mode) for name, mode in modes.items() if mode & 0o077}
    assert shared == {}, f"readable by others: {shared}"


def test_our_lock_dirs_are_private_and_still_ours(open_umask: None, config_root: Path) -> None:
    store = FileStore(Layout(config_root))
    store.teams.create("t")
    inbox = store.mail.inbox_path("t", "team-lead")
    with FileLock(inbox):
        mode = os.lstat(lock_dir_for(inbox)).st_mode
        assert stat.S_IMODE(mode) == 0o1700  # the sticky bit still marks it as one of ours


def test_a_file_another_program_made_is_replaced_privately(open_umask: None, config_root: Path) -> None:
    """A real `claude` of the same user may have made the inbox 0644: our rewrite leaves it 0600, and it reads on."""
    store = FileStore(Layout(config_root))
    store.teams.create("t")
    inbox = store.mail.inbox_path("t", "team-lead")
    inbox.write_text("[]")
    inbox.chmod(0o644)
    store.mail.send("t", "team-lead", "hello", sender="alice")
    assert stat.S_IMODE(inbox.stat().st_mode) == 0o600
    assert [e.text for e in store.mail.read_live("t", "team-lead")] == ["hello"]
