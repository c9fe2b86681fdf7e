"""Exact sends (issue 14, item 6): a `msg send` that reports failure is never delivered, not even once the disk
has room again, so the caller's retry is the only copy; the error names the inbox and what the disk said."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from agentteams.store.file.mailbox import Mailbox
from agentteams.store.paths import Layout
from tests.faults.disks import file_size_limit, fill, read_only, small_tmpfs
from tests.support.builders import team_with_members
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger

TEAM = "t"
EARLIER = 3  # messages already in the inbox: its rewrite needs more room than one spooled record


def ready_team(layout: Layout) -> Path:
    team_with_members(layout, TEAM, "alice")
    box = Mailbox(layout)
    for n in range(EARLIER):
        box.send(TEAM, "alice", f"earlier {n} " + "x" * 1500, sender="team-lead")
    return layout.inbox_file(TEAM, "alice")


def texts(layout: Layout) -> list[str]:
    return [e.text for e in Mailbox(layout).read_all(TEAM, "alice")]


def send(cli: Cli, text: str, preexec: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    """`agentteams msg send` as a real process (`preexec` runs in the child before it starts)."""
    proc = subprocess.run(
        cli.argv("msg", "send", TEAM, "alice", text), env=cli.env(), capture_output=True, text=True, timeout=60,
        check=False, preexec_fn=preexec,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def retry_once_healed(cli: Cli, layout: Layout, ledger: FaultLedger, failed: subprocess.CompletedProcess[str]) -> None:
    """`failed` was a send under the fault; once it is gone the caller retries, and a later send goes through:
    the retried message arrives once, and nothing reported as sent is missing."""
    retry = send(cli, "the message")
    later = send(cli, "a later one")
    ledger.writes += 3
    assert retry.returncode == 0 and later.returncode == 0, retry.stderr + later.stderr
    found = texts(layout)
    ledger.duplicates += max(0, found.count("the message") - 1)
    ledger.lost += sum(1 for t in ("the message", "a later one") if t not in found)
    assert found.count("the message") == 1, found
    assert len([t for t in found if t.startswith("earlier ")]) == EARLIER
    assert failed.stdout == ""


def one_line(stderr: str, *words: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_a_send_on_a_full_disk_fails_and_is_never_delivered(cli: Cli, config_root: Path, ledger: FaultLedger) -> None:
    with small_tmpfs(config_root):
        layout = Layout(config_root)
        inbox = ready_team(layout)
        filler = fill(config_root, leave_pages=1)  # room for the spooled record, none for the inbox's rewrite
        ledger.faults += 1
        failed = send(cli, "the message")
        assert failed.returncode == 1
        one_line(failed.stderr, str(inbox), "No space left on device", "not sent")
        filler.unlink()
        retry_once_healed(cli, layout, ledger, failed)


def test_a_send_beyond_the_file_size_limit_fails_and_is_never_delivered(
    cli: Cli, layout: Layout, ledger: FaultLedger
) -> None:
    inbox = ready_team(layout)
    assert inbox.stat().st_size > 4096
    ledger.faults += 1
    failed = send(cli, "the message", file_size_limit(4096))  # the spool fits, the inbox does not
    assert failed.returncode == 1
    one_line(failed.stderr, str(inbox), "File too large", "not sent")
    retry_once_healed(cli, layout, ledger, failed)


def test_a_send_to_a_read_only_inbox_dir_fails_naming_the_path(cli: Cli, layout: Layout, ledger: FaultLedger) -> None:
    inbox = ready_team(layout)
    with read_only(inbox.parent):
        ledger.faults += 1
        failed = send(cli, "the message")
        assert failed.returncode == 1
        one_line(failed.stderr, str(inbox), "not sent")
        assert "Read-only file system" in failed.stderr or "Permission denied" in failed.stderr
    retry_once_healed(cli, layout, ledger, failed)
