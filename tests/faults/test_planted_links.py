"""Planted symbolic links (issue 14, item 3): a link where a file or directory of ours belongs, pointing outside
the config root, is refused in one line naming it; the file it points at is never written, truncated or read."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentteams.errors import UnsafePathError
from agentteams.store import write_failures
from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.store.presence import Presence
from agentteams.store.transcripts.writer import Transcript
from tests.support.cli import Cli
from tests.support.fault_ledger import FaultLedger

SECRET = "SECRET-outside-the-root"
OLD = 1_600_000_000_000_000_000  # the outside files' mtime: any write moves it
Setup = Callable[[FileStore], None]


def _envelope(text: str) -> dict[str, object]:
    return {"from": "mallory", "text": text, "timestamp": "2026-01-01T00:00:00.000Z", "read": False}


def _team(store: FileStore) -> None:
    store.teams.create("t")


def _task(store: FileStore) -> None:
    _team(store)
    store.tasks.create("t", "first")


def _delivered(store: FileStore) -> None:
    _team(store)
    for i in range(22):  # beyond KEEP_DELIVERED: marking them read moves the oldest into the history file
        store.mail.send("t", "team-lead", f"m{i}", sender="alice")


def _bad_element(store: FileStore) -> None:
    _team(store)
    inbox = store.mail.inbox_path("t", "team-lead")
    inbox.write_text(json.dumps([_envelope("good"), {"bogus": 1}]))


@dataclass(frozen=True)
class Plant:
    """A link at `link` (under the root) to an outside file (`content`) or directory, then `runs` as a user would."""

    link: str
    runs: tuple[tuple[str, ...], ...]
    content: bytes | None = None  # None: the link points at an outside directory
    setup: Setup = _team


SEND = ("msg", "send", "t", "team-lead", "hello")
PLANTS = {
    "inbox lock queue": Plant("teams/t/inboxes/.team-lead.json.flock", (SEND,), b"outside queue file\n"),
    "spool": Plant("teams/t/inboxes/.team-lead.json.spool", (SEND,), b"outside spool\n"),
    "in-flight spool": Plant(
        "teams/t/inboxes/.team-lead.json.spool.inflight",
        (SEND, ("msg", "read", "t", "team-lead")),
        b"\n" + json.dumps(_envelope(SECRET)).encode() + b"\n",
    ),
    "inbox": Plant(
        "teams/t/inboxes/team-lead.json", (("msg", "read", "t", "team-lead"),), json.dumps([_envelope(SECRET)]).encode()
    ),
    "history": Plant(
        "teams/t/inboxes/team-lead.history.jsonl",
        (("msg", "read", "t", "team-lead", "--mark-read"), ("msg", "read", "t", "team-lead", "--all")),
        json.dumps(_envelope(SECRET)).encode() + b"\n",
        _delivered,
    ),
    "rejects file": Plant("teams/t/inboxes/team-lead.rejected.jsonl", (SEND,), b"outside rejects\n", _bad_element),
    "team config": Plant(
        "teams/t/config.json", (("team", "show", "t"), SEND), json.dumps({"name": "t", "description": SECRET}).encode()
    ),
    "team directory": Plant("teams/t", (SEND, ("team", "show", "t"), ("team", "list"))),
    "inbox lock directory": Plant("teams/t/inboxes/team-lead.json.lock", (SEND,)),
    "inbox directory": Plant("teams/t/inboxes", (SEND,)),
    "task directory": Plant("tasks/t", (("task", "create", "t", "second"), ("task", "list", "t"))),
    "task lock queue": Plant(
        "tasks/t/.1.json.flock", (("task", "update", "t", "1", "--status", "in_progress"),), b"outside\n", _task
    ),
    "task list lock queue": Plant("tasks/t/..lock.flock", (("task", "create", "t", "second"),), b"outside\n", _task),
    "task file": Plant(
        "tasks/t/1.json",
        (("task", "get", "t", "1"), ("task", "update", "t", "1", "--status", "completed")),
        json.dumps({"id": "1", "subject": SECRET, "status": "pending", "blocks": [], "blockedBy": []}).encode(),
        _task,
    ),
}


def _snapshot(outside: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under `outside`: its content, size and mtime."""
    found = {}
    for path in sorted(outside.rglob("*")):
        st = path.lstat()
        content = path.read_bytes() if path.is_file() else b""
        found[str(path.relative_to(outside))] = (content, st.st_size, st.st_mtime_ns)
    return found


def _plant(root: Path, tmp_path: Path, plant: Plant) -> tuple[Path, Path]:
    """The link and the outside directory it (or its file) lives in; what the link replaces is moved aside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    link = root / plant.link
    target = outside
    if plant.content is not None:
        target = outside / "victim"
        target.write_bytes(plant.content)
        os.utime(target, ns=(OLD, OLD))
    elif link.exists():  # a directory of ours: the outside one starts as its copy, so ours would work in it
        for child in link.rglob("*"):
            dest = outside / child.relative_to(link)
            dest.mkdir() if child.is_dir() else dest.write_bytes(child.read_bytes())
    if link.is_dir() and not link.is_symlink():
        link.rename(tmp_path / "ours")
    elif link.exists() or link.is_symlink():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link, outside


@pytest.mark.parametrize("case", PLANTS, ids=list(PLANTS))
def test_a_planted_link_is_refused_and_nothing_outside_is_touched(
    case: str, cli: Cli, config_root: Path, tmp_path: Path, ledger: FaultLedger
) -> None:
    plant = PLANTS[case]
    plant.setup(FileStore(Layout(config_root)))
    link, outside = _plant(config_root, tmp_path, plant)
    before = _snapshot(outside)
    ledger.faults += 1
    refusals = []
    for run in plant.runs:
        ledger.writes += 1
        proc = cli(*run)
        if SECRET in proc.stdout + proc.stderr:
            ledger.outside += 1  # read through the link
        if proc.returncode != 0:
            refusals.append(proc.stderr.strip())
    if _snapshot(outside) != before:
        ledger.outside += 1
    assert link.is_symlink()
    assert refusals, f"{case}: no command refused the link {link}"
    for line in refusals:
        assert len(line.splitlines()) == 1 and str(link) in line and "symbolic link" in line, line


def test_presence_transcript_and_plan_never_follow_a_link(
    config_root: Path, tmp_path: Path, ledger: FaultLedger, caplog: pytest.LogCaptureFixture
) -> None:
    """What the runtimes write in-process: a presence record, a session transcript, plan mode's plan file."""
    from agentteams.agent.permissions.policy import PermissionPolicy

    layout = Layout(config_root)
    store = FileStore(layout)
    store.teams.create("t")
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim"
    victim.write_bytes(b"keep")
    os.utime(victim, ns=(OLD, OLD))

    store.presence.write("t", "alice", Presence(pid=os.getpid(), session_id="s", backend="process"))
    record = outside / "presence.json"
    agents = config_root / "teams/t/agents"
    record.write_bytes((agents / "alice.json").read_bytes())
    os.utime(record, ns=(OLD, OLD))
    (agents / "alice.json").unlink()
    (agents / "alice.json").symlink_to(record)
    before = _snapshot(outside)
    ledger.faults, ledger.writes = ledger.faults + 1, ledger.writes + 1
    assert store.presence.read("t", "alice") is None  # not read through the link
    agents.rename(tmp_path / "agents")
    agents.symlink_to(outside)
    ledger.faults, ledger.writes = ledger.faults + 1, ledger.writes + 1
    with pytest.raises(UnsafePathError, match="agents"):
        store.presence.write("t", "alice", Presence(pid=os.getpid(), session_id="s", backend="process"))

    transcript = layout.transcript_file(tmp_path, "sess")
    transcript.parent.mkdir(parents=True)
    transcript.symlink_to(victim)
    ledger.faults, ledger.writes = ledger.faults + 1, ledger.writes + 1
    with caplog.at_level(logging.WARNING, logger="agentteams"):  # a write failure is a warning (item 7), and
        Transcript(transcript, "sess", cwd=str(tmp_path)).prompt("team-lead", "hi")  # nothing goes through
    assert "sess.jsonl: it is a symbolic link" in caplog.text and victim.read_bytes() == b"keep"
    write_failures.reset()

    transcript.unlink()
    transcript.parent.rmdir()
    transcript.parent.symlink_to(outside)
    ledger.faults, ledger.writes = ledger.faults + 1, ledger.writes + 1
    with pytest.raises(UnsafePathError, match="symbolic link"):
        Transcript(layout.transcript_file(tmp_path, "sess"), "sess", cwd=str(tmp_path)).prompt("team-lead", "hi")

    plan = layout.plan_file("sess")
    plan.parent.mkdir()
    plan.symlink_to(victim)
    ledger.faults += 1
    policy = PermissionPolicy(mode="plan", cwd=tmp_path, plan_file=plan)
    assert policy.decide("Write", "edit", str(plan)).behavior == "deny"  # writing it would write `victim`

    if _snapshot(outside) != before:
        ledger.outside += 1


def test_logs_never_print_a_linked_transcript(cli: Cli, config_root: Path, tmp_path: Path, ledger: FaultLedger) -> None:
    """`agentteams logs` prints a transcript: a link planted in its place is refused, not printed."""
    layout = Layout(config_root)
    FileStore(layout).teams.create("t", lead_session_id="sess", cwd=str(tmp_path))
    victim = tmp_path / "outside.jsonl"
    entry = {"type": "user", "message": {"role": "user", "content": SECRET}, "agent": "team-lead", "team": "t",
             "uuid": "u1", "parentUuid": None, "sessionId": "sess"}  # fmt: skip
    victim.write_text(json.dumps(entry) + "\n")
    transcript = layout.transcript_file(tmp_path, "sess")
    transcript.parent.mkdir(parents=True)
    transcript.symlink_to(victim)
    ledger.faults, ledger.writes = 1, 1
    proc = cli("logs", "t", "lead")
    ledger.outside += SECRET in proc.stdout + proc.stderr
    assert proc.returncode != 0 and str(transcript) in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
