"""The task store: ids, watermark, merge updates, dependencies, claims, unassignment, key order per generation."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from agentteams.errors import ConflictError, NotFoundError
from agentteams.pids import LeadProcess
from agentteams.store.file.mailbox import Mailbox
from agentteams.store.file.tasks import TaskStore
from agentteams.store.file.teams import NewMember, TeamStore
from agentteams.store.fs.atomic_json import epoch_ms
from agentteams.store.paths import Layout
from agentteams.store.protocol import TaskAssignment, parse_message
from tests.support.builders import team_with_members
from tests.support.task_board import counting_task_reads, write_board


@pytest.fixture
def tasks(layout: Layout) -> TaskStore:
    team_with_members(layout, "t", "alice", "bob")
    return TaskStore(layout)


def test_ids_increase_and_are_never_reused(tasks: TaskStore, layout: Layout) -> None:
    assert [tasks.create("t", f"s{i}").id for i in range(3)] == ["1", "2", "3"]
    tasks.delete("t", "3")
    assert layout.highwatermark_file("t").read_text() == "3"
    assert tasks.create("t", "s4").id == "4"
    assert [t.id for t in tasks.list_tasks("t")] == ["1", "2", "4"]


def test_ids_sort_numerically(tasks: TaskStore) -> None:
    for i in range(11):
        tasks.create("t", f"s{i}")
    assert [t.id for t in tasks.list_tasks("t")] == [str(i) for i in range(1, 12)]


def test_update_merges_and_reports_changed_fields(tasks: TaskStore) -> None:
    tasks.create("t", "s", "d")
    result = tasks.update("t", "1", status="in_progress", description="d")
    assert result.updated == ["status"]
    assert tasks.update("t", "1", subject="s").updated == []
    assert tasks.get("t", "1").status == "in_progress"
    with pytest.raises(NotFoundError):
        tasks.update("t", "9", status="completed")


def test_owner_change_sends_task_assignment(tasks: TaskStore, layout: Layout) -> None:
    tasks.create("t", "Write tests", "Add tests")
    assert tasks.update("t", "1", owner="alice").assignment_sent
    [env] = Mailbox(layout).unread("t", "alice")
    msg = parse_message(env.text)
    assert isinstance(msg, TaskAssignment)
    assert (msg.task_id, msg.subject, msg.assigned_by) == ("1", "Write tests", "team-lead")
    assert not tasks.update("t", "1", owner="bob", assigned_by="bob").assignment_sent  # self-claim
    assert not tasks.update("t", "1", owner="").assignment_sent
    assert tasks.get("t", "1").owner is None


def test_dependencies_are_two_way_and_cleaned_on_delete(tasks: TaskStore) -> None:
    for s in "abc":
        tasks.create("t", s)
    tasks.update("t", "3", add_blocked_by=["1", "2"])
    tasks.update("t", "1", add_blocks=["2"])
    assert tasks.get("t", "1").blocks == ["3", "2"]
    assert tasks.get("t", "2").blocked_by == ["1"]
    tasks.delete("t", "1")
    assert tasks.get("t", "3").blocked_by == ["2"]
    assert tasks.get("t", "2").blocked_by == []


def test_cycles_and_bad_links_are_refused(tasks: TaskStore) -> None:
    for s in "abcd":
        tasks.create("t", s)
    tasks.update("t", "2", add_blocked_by=["1"])
    tasks.update("t", "3", add_blocked_by=["2"])
    with pytest.raises(ConflictError, match="cycle"):
        tasks.update("t", "1", add_blocked_by=["3"])
    with pytest.raises(ConflictError, match="cycle"):
        tasks.update("t", "3", add_blocks=["1"])
    with pytest.raises(ConflictError, match="itself"):
        tasks.update("t", "4", add_blocks=["4"])
    with pytest.raises(NotFoundError):
        tasks.update("t", "4", add_blocked_by=["99"])
    assert tasks.get("t", "1").blocked_by == []  # nothing half-applied


def test_create_with_blockers(tasks: TaskStore) -> None:
    tasks.create("t", "a")
    task = tasks.create("t", "b", blocked_by=["1", "1"])
    assert task.blocked_by == ["1"]
    assert tasks.get("t", "1").blocks == ["2"]
    with pytest.raises(NotFoundError):
        tasks.create("t", "c", blocked_by=["7"])


def test_claim_reasons(tasks: TaskStore) -> None:
    tasks.create("t", "a")
    tasks.create("t", "b", blocked_by=["1"])
    tasks.create("t", "c")
    assert tasks.claim("t", "9", "alice").reason == "task_not_found"
    assert tasks.claim("t", "2", "alice").reason == "blocked"
    ok = tasks.claim("t", "1", "alice")
    assert ok.success and ok.task is not None
    assert (ok.task.owner, ok.task.status) == ("alice", "in_progress")
    assert tasks.claim("t", "1", "alice").success  # claiming your own task again is fine
    assert tasks.claim("t", "1", "bob").reason == "already_claimed"
    busy = tasks.claim("t", "3", "alice", check_busy=True)
    assert (busy.reason, busy.busy_with) == ("agent_busy", ["1"])
    tasks.update("t", "1", status="completed")
    assert tasks.claim("t", "1", "alice").reason == "already_resolved"
    assert tasks.claim("t", "2", "bob").success


def test_find_and_claim_next_take_the_lowest_unblocked(tasks: TaskStore) -> None:
    tasks.create("t", "a")
    tasks.create("t", "b", blocked_by=["1"])
    tasks.create("t", "c")
    first = tasks.claim_next("t", "alice")
    second = tasks.claim_next("t", "bob")
    assert first.task is not None and first.task.id == "1"
    assert second.task is not None and second.task.id == "3"
    assert tasks.claim_next("t", "carol").reason == "task_not_found"
    tasks.update("t", "1", status="completed")
    found = tasks.find_claimable("t")
    assert found is not None and found.id == "2"


def test_unassign_all_puts_open_work_back(tasks: TaskStore, layout: Layout) -> None:
    for s in "abc":
        tasks.create("t", s)
    for i in ("1", "2", "3"):
        tasks.claim("t", i, "alice")
    tasks.update("t", "3", status="completed")
    result = tasks.unassign_all("t", "alice", "alice@t")
    assert [t.id for t in result.tasks] == ["1", "2"]
    raw = json.loads(layout.task_file("t", "1").read_text())
    assert "owner" not in raw and raw["status"] == "pending"
    assert tasks.get("t", "3").owner == "alice"
    assert tasks.unassign_all("t", "bob").tasks == []


def test_status_deleted_deletes(tasks: TaskStore, layout: Layout) -> None:
    tasks.create("t", "a")
    tasks.update("t", "1", status="deleted")
    assert not layout.task_file("t", "1").exists()
    assert tasks.create("t", "b").id == "2"


# -- key order: the generation that owns the team -------------------------------------------------------

CREATED = ["id", "subject", "description", "activeForm", "status", "blocks", "blockedBy"]


def keys(layout: Layout, team: str, task_id: str) -> list[str]:
    return list(json.loads(layout.task_file(team, task_id).read_text()))


def test_a_2_1_330_team_keeps_task_keys_where_they_are_and_appends_new_ones(layout: Layout) -> None:
    TeamStore(layout).create("new", lead_process=LeadProcess.for_this_process(epoch_ms()))
    TeamStore(layout).add_member("new", NewMember(name="alice"))
    tasks = TaskStore(layout)
    tasks.create("new", "a", "d", active_form="doing a")
    tasks.create("new", "b")
    assert keys(layout, "new", "1") == CREATED
    tasks.update("new", "2", owner="alice", add_blocked_by=["1"])
    assert keys(layout, "new", "2") == [k for k in CREATED if k != "activeForm"] + ["owner"]
    tasks.update("new", "2", status="in_progress", metadata={"k": 1})
    assert keys(layout, "new", "2")[-2:] == ["owner", "metadata"]  # a value changed in place, a new key appended
    tasks.unassign_all("new", "alice")
    assert keys(layout, "new", "2") == [k for k in CREATED if k != "activeForm"] + ["metadata"]
    tasks.claim("new", "1", "alice")  # a claim holds a lease: in `metadata`, appended as 2.1.330 appends new keys
    assert keys(layout, "new", "1") == [*CREATED, "owner", "metadata"]


def test_a_2_1_197_team_rewrites_tasks_in_schema_order(tasks: TaskStore, layout: Layout) -> None:
    tasks.create("t", "a", active_form="doing a")
    tasks.update("t", "1", owner="alice")
    assert keys(layout, "t", "1") == ["id", "subject", "description", "activeForm", "owner", "status", "blocks",
                                       "blockedBy"]  # fmt: skip


def test_a_2_1_330_team_keeps_a_schema_ordered_file_as_it_is(layout: Layout) -> None:
    TeamStore(layout).create("new", lead_process=LeadProcess.for_this_process(epoch_ms()))
    TeamStore(layout).add_member("new", NewMember(name="alice"))
    tasks = TaskStore(layout)
    tasks.create("new", "a")
    path = layout.task_file("new", "1")
    old_style = {"id": "1", "subject": "a", "description": "", "owner": "bob", "status": "pending", "blocks": [],
                 "blockedBy": []}  # fmt: skip
    path.write_text(json.dumps(old_style, indent=2))
    tasks.update("new", "1", owner="alice", status="in_progress")
    assert keys(layout, "new", "1") == list(old_style)


def test_a_task_list_without_its_team_is_written_in_schema_order(layout: Layout) -> None:
    tasks = TaskStore(layout)  # 2.1.330 deletes teams/<team>/ at exit and keeps tasks/<team>/
    tasks.create("gone", "a")
    tasks.update("gone", "1", owner="alice")
    assert keys(layout, "gone", "1").index("owner") < keys(layout, "gone", "1").index("status")


def test_a_task_whose_blockers_are_all_done_is_not_shown_as_blocked(layout: Layout) -> None:
    from agentteams.store.task_text import task_lines

    store = TaskStore(layout)
    for subject in ("Lexer", "Parser", "Integrate"):
        store.create("t", subject)
    store.update("t", "3", add_blocked_by=["1", "2"])
    assert task_lines(store.list_tasks("t"))[2] == "#3 [pending] Integrate [blocked by #1, #2]"
    store.update("t", "1", status="completed")
    assert task_lines(store.list_tasks("t"))[2] == "#3 [pending] Integrate [blocked by #2]"
    store.update("t", "2", status="completed")
    assert task_lines(store.list_tasks("t"))[2] == "#3 [pending] Integrate"


# -- how much a listing and a claim read (issue 30: large boards) ----------------------------------------


def test_a_listing_reads_each_task_file_once(tasks: TaskStore, layout: Layout) -> None:
    write_board(layout, "t", [{"subject": f"s{i}", "status": "completed" if i < 30 else "pending"} for i in range(40)])
    with counting_task_reads() as reads:
        listed = tasks.list_tasks("t")
    assert [t.id for t in listed] == [str(i) for i in range(1, 41)]
    assert reads == {str(i): 1 for i in range(1, 41)}


def test_a_claim_reads_the_task_and_its_blockers_not_the_board(tasks: TaskStore, layout: Layout) -> None:
    docs: list[dict[str, Any]] = [{"subject": f"s{i}", "status": "completed"} for i in range(38)]
    docs += [{"subject": "open blocker"}, {"subject": "blocked", "blockedBy": ["39", "5"]}]
    write_board(layout, "t", docs)
    with counting_task_reads() as reads:
        assert tasks.claim("t", "40", "alice").reason == "blocked"
    assert reads == {"40": 1, "39": 1, "5": 1}
    with counting_task_reads() as reads:
        assert tasks.claim("t", "39", "alice").success
    assert reads == {"39": 1}


def test_claim_next_looks_with_one_read_and_no_lock(tasks: TaskStore, layout: Layout) -> None:
    """A teammate's look for work (the busy check on) reads the board once, without a lock, when it finds nothing or
    finds the agent busy; a claim then reads it once more under the list lock, as Claude Code's busy check does.
    Both are the board view's reads (store/file/board_cache.py): files as recent as the racy window are read each
    time, older ones come from our stat-checked copy. Without the busy check, a claim reads only its task and that
    task's blockers again."""
    docs: list[dict[str, Any]] = [{"subject": f"s{i}", "status": "completed"} for i in range(30)]
    docs += [{"subject": "blocked by a done one", "blockedBy": ["30"]}, {"subject": "next"}, {"subject": "last"}]
    write_board(layout, "t", docs)
    everything = {str(i): 1 for i in range(1, 34)}
    with counting_task_reads() as reads:
        first = tasks.claim_next("t", "alice", check_busy=True)
    assert first.task is not None and first.task.id == "31"
    assert reads == {**dict.fromkeys(everything, 2), "31": 3}  # every file just written: racily recent, read
    with counting_task_reads() as reads:
        busy = tasks.claim_next("t", "alice", check_busy=True)
    assert (busy.reason, busy.busy_with, reads) == ("agent_busy", ["31"], {**everything, "32": 2})
    assert busy.task is not None and busy.task.id == "32" and busy.task.subject == "next"  # the record, read again
    with counting_task_reads() as reads:
        second = tasks.claim_next("t", "bob")
    assert second.task is not None and second.task.id == "32"
    assert reads == {**everything, "32": 2}
    assert tasks.claim_next("t", "carol", check_busy=True).success
    with counting_task_reads() as reads:
        assert tasks.claim_next("t", "dave", check_busy=True).reason == "task_not_found"
    assert reads == everything


def test_claims_on_a_settled_board_read_only_what_changed(tasks: TaskStore, layout: Layout) -> None:
    """Issue 30: on a board whose files are older than the racy window, a look for work and a busy-checked claim read
    no task file but the ones changed since (our copy of the board is stat-checked), however large the board."""
    docs: list[dict[str, Any]] = [{"subject": f"s{i}", "status": "completed"} for i in range(300)]
    docs += [{"subject": "next"}, {"subject": "after next", "blockedBy": ["301"]}, {"subject": "free"}]
    write_board(layout, "t", docs)
    then = time.time_ns() - 10 * 10**9
    for f in layout.task_dir("t").glob("*.json"):
        os.utime(f, ns=(then, then))
    tasks.board("t")  # a look (status, a teammate's look) has made the copy
    with counting_task_reads() as reads:
        claimed = tasks.claim_next("t", "alice", check_busy=True)
    assert claimed.success and claimed.task is not None and claimed.task.id == "301"
    assert reads == {"301": 1}  # the claimed task, under its lock
    with counting_task_reads() as reads:
        busy = tasks.claim_next("t", "alice", check_busy=True)
    assert (busy.reason, busy.busy_with) == ("agent_busy", ["301"])  # the claim just written is seen
    assert busy.task is not None and busy.task.id == "303"
    assert reads == {"301": 1, "303": 1}  # 301 racily recent; 303 the record the answer carries
    with counting_task_reads() as reads:
        picked = tasks.claim_next("t", "bob", check_busy=True)
    assert picked.success and picked.task is not None and picked.task.id == "303"  # 302 waits for 301
    assert reads == {"301": 2, "303": 1}  # the look and the claim's board, then the claimed task under its lock
