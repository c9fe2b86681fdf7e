"""`leadProcess` (Claude Code 2.1.330): the process facts in pids.py, its place in the team config, kept on every
rewrite even when malformed, written at creation and by the compare-and-set claim."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentteams import pids
from agentteams.pids import LeadProcess, pid_space, proc_start
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import dump_json, epoch_ms
from agentteams.store.paths import Layout
from tests.support.wait import wait_until

CHILD_COMM = "x) Z 1 2"
RECORD = {"pid": 25734, "pidSpace": "vm#pid:[4026531836]", "claimedAt": 1795433868257, "procStart": "148847"}


def stat_field_22(pid: int, comm: str) -> str:
    """Field 22 of /proc/<pid>/stat, skipping `<pid> (<comm>) ` by its known length."""
    return Path(f"/proc/{pid}/stat").read_text()[len(f"{pid} ({comm}) ") :].split()[22 - 3]


def own_comm() -> str:
    return Path("/proc/self/comm").read_text().removesuffix("\n")


def beyond_pid_max() -> int:
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1  # no process can have it: kill gives ESRCH


@pytest.fixture
def child() -> Iterator[subprocess.Popen[str]]:
    """A Python child that renames itself `x) Z 1 2` (a comm that fools a naive split), then waits on stdin."""
    code = (
        f"import sys; open('/proc/self/comm', 'w').write({CHILD_COMM!r}); print('ready', flush=True); sys.stdin.read()"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


# -- pids.py -----------------------------------------------------------------------------------------


def test_proc_start_is_field_22_even_behind_a_tricky_command_name(child: subprocess.Popen[str]) -> None:
    assert Path(f"/proc/{child.pid}/comm").read_text() == CHILD_COMM + "\n"
    assert proc_start(child.pid) == stat_field_22(child.pid, CHILD_COMM)
    assert proc_start(os.getpid()) == stat_field_22(os.getpid(), own_comm())
    assert pids.pid_alive(child.pid)  # not taken for a zombie by the "Z" in its name
    assert proc_start(beyond_pid_max()) is None


def test_pid_space_is_hostname_and_pid_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pid_space() == f"{socket.gethostname()}#{os.readlink('/proc/self/ns/pid')}"
    assert pid_space().split("#")[1].startswith("pid:[")

    def fail(path: str) -> str:
        raise OSError("no such namespace link")

    monkeypatch.setattr(os, "readlink", fail)
    assert pid_space() == socket.gethostname()


def test_a_record_for_this_process() -> None:
    now = epoch_ms()
    mine = LeadProcess.for_this_process(now)
    assert (mine.pid, mine.pid_space, mine.claimed_at) == (os.getpid(), pid_space(), now)
    assert mine.proc_start == stat_field_22(os.getpid(), own_comm())
    assert list(mine.to_json()) == ["pid", "pidSpace", "claimedAt", "procStart"]
    assert LeadProcess.from_json(mine.to_json()) == mine
    assert list(LeadProcess(1, "h", 2).to_json()) == ["pid", "pidSpace", "claimedAt"]  # no token: no key
    with pytest.raises(AttributeError):
        mine.pid = 1


MALFORMED: list[Any] = [
    None, [], "x", {}, {**RECORD, "pid": "25734"}, {**RECORD, "pid": 1.5}, {**RECORD, "pid": True},
    {**RECORD, "pid": 2**53}, {**RECORD, "pidSpace": 5}, {**RECORD, "pidSpace": None}, {**RECORD, "claimedAt": "1"},
    {**RECORD, "claimedAt": float("inf")}, {**RECORD, "claimedAt": None}, {**RECORD, "procStart": 148847},
    {**RECORD, "procStart": None}, {k: v for k, v in RECORD.items() if k != "pid"},
]  # fmt: skip


@pytest.mark.parametrize("raw", MALFORMED, ids=repr)
def test_what_2_1_330_drops_reads_as_no_record(raw: Any) -> None:
    assert LeadProcess.from_json(raw) is None


def test_what_2_1_330_keeps_reads() -> None:
    golden = LeadProcess.from_json(RECORD)
    assert golden == LeadProcess(25734, "vm#pid:[4026531836]", 1795433868257, "148847")
    assert LeadProcess.from_json({**RECORD, "pid": 25734.0, "extra": 1}) == golden  # one number type in JSON
    no_token = {k: v for k, v in RECORD.items() if k != "procStart"}
    assert LeadProcess.from_json(no_token) == LeadProcess(25734, "vm#pid:[4026531836]", 1795433868257)


def test_is_gone() -> None:
    now = epoch_ms()
    mine = LeadProcess.for_this_process(now)
    assert mine.is_gone() is False
    assert LeadProcess(os.getpid(), "elsewhere#pid:[1]", now).is_gone() is None  # another machine: cannot tell
    assert LeadProcess(0, pid_space(), now).is_gone() is None  # no single process's pid
    assert LeadProcess(beyond_pid_max(), pid_space(), now).is_gone() is True  # ESRCH
    assert LeadProcess(os.getpid(), pid_space(), now, "1").is_gone() is True  # the pid was reused
    assert LeadProcess(os.getpid(), pid_space(), now).is_gone() is False  # no token, started before the claim


def test_without_a_token_a_process_started_after_the_claim_is_another() -> None:
    claimed = epoch_ms()
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert LeadProcess(proc.pid, pid_space(), claimed).is_gone() is False  # started within 2 s of the claim
        assert LeadProcess(proc.pid, pid_space(), claimed - 10_000).is_gone() is True  # 10 s later: a reused pid
        assert LeadProcess(proc.pid, pid_space(), claimed - 10_000, proc_start(proc.pid)).is_gone() is False
    finally:
        proc.kill()
        proc.wait()


def test_a_zombie_lead_is_gone() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        wait_until(lambda: not pids.pid_alive(proc.pid), 10, "the child to exit (unreaped)")
        assert LeadProcess(proc.pid, pid_space(), epoch_ms(), proc_start(proc.pid)).is_gone() is True
    finally:
        proc.wait()


# -- the team config ---------------------------------------------------------------------------------


def test_create_writes_lead_process_in_2_1_330_order(layout: Layout) -> None:
    mine = LeadProcess.for_this_process(epoch_ms())
    TeamStore(layout).create("t", lead_session_id="s", lead_process=mine)
    on_disk = json.loads(layout.config_file("t").read_text())
    assert list(on_disk) == ["name", "createdAt", "leadAgentId", "leadSessionId", "leadProcess", "members"]
    assert on_disk["leadProcess"] == mine.to_json()
    assert TeamStore(layout).read("t").lead_process == mine
    # a description keeps our place for it, second
    TeamStore(layout).create("d", description="what for", lead_process=mine)
    assert list(json.loads(layout.config_file("d").read_text()))[:2] == ["name", "description"]
    # without one, 2.1.197's layout
    TeamStore(layout).create("old")
    assert "leadProcess" not in json.loads(layout.config_file("old").read_text())
    assert not TeamStore(layout).read("old").from_2_1_330


@pytest.mark.parametrize("raw", [{**RECORD, "pid": "x"}, None, "garbage", {**RECORD, "unknown": [1]}], ids=repr)
def test_lead_process_survives_every_rewrite_even_malformed(layout: Layout, raw: Any) -> None:
    teams = TeamStore(layout)
    teams.create("t")
    path = layout.config_file("t")
    data = json.loads(path.read_text())
    data = {**{k: v for k, v in data.items() if k != "members"}, "leadProcess": raw, "members": data["members"]}
    path.write_text(dump_json(data))
    teams.add_member("t", NewMember(name="alice"))
    teams.set_member_fields("t", "alice", tmux_pane_id="%1")
    teams.remove_member("t", "alice")
    after = json.loads(path.read_text())
    assert list(after) == list(data) and after["leadProcess"] == raw
    assert teams.read("t").lead_process == LeadProcess.from_json(raw)


def test_claim_lead_is_a_compare_and_set(layout: Layout) -> None:
    teams = TeamStore(layout)
    teams.create("t")
    path = layout.config_file("t")
    first = LeadProcess(111, pid_space(), 1000, "5")
    second = LeadProcess(222, pid_space(), 2000, "6")

    assert teams.claim_lead("t", first)  # nothing recorded: the claim wins
    assert teams.read("t").lead_process == first
    before = path.read_bytes()
    assert not teams.claim_lead("t", second)  # it expected none, but `first` is there
    assert not teams.claim_lead("t", second, expected=LeadProcess(111, pid_space(), 999))  # claimedAt differs
    assert path.read_bytes() == before  # a lost claim writes nothing
    assert teams.claim_lead("t", second, expected=LeadProcess(111, "other", 1000))  # pid and claimedAt decide
    assert teams.read("t").lead_process == second
    assert list(json.loads(path.read_text()))[4] == "leadProcess"  # where 2.1.330 has it, not appended

    data = json.loads(path.read_text())
    data["leadProcess"] = {"pid": "malformed"}
    path.write_text(dump_json(data))
    assert teams.claim_lead("t", first)  # a malformed record counts as none, as for 2.1.330
    assert teams.read("t").lead_process == first
