"""A board view's read (`TaskStore.board`): the same tasks as `list_tasks`, a stat per file once our copy is current,
every change seen (a rewrite, a racily recent file, a new list of the same name), a corrupt file still moved aside."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from agentteams import diagnostics
from agentteams.errors import UnsafePathError
from agentteams.store.file.board_cache import RACY_NS
from agentteams.store.file.tasks import TaskStore
from agentteams.store.paths import Layout
from agentteams.store.values import BoardTask
from tests.support.builders import team_with_members
from tests.support.task_board import counting_task_reads, write_board

TEAM = "t"


@pytest.fixture
def tasks(layout: Layout) -> TaskStore:
    team_with_members(layout, TEAM, "alice", "bob")
    write_board(layout, TEAM, [
        {"subject": "one", "status": "completed", "owner": "alice"},
        {"subject": "two", "status": "in_progress", "owner": "bob", "blocks": ["3"]},
        {"subject": "three", "blockedBy": ["2"], "metadata": {"k": 1}, "activeForm": "Doing three"},
    ])  # fmt: skip
    return TaskStore(layout)


def _age(layout: Layout, seconds: float = 10.0) -> None:
    """Every task file as if written `seconds` ago: past the racy window."""
    then = time.time_ns() - int(seconds * 1e9)
    for f in layout.task_dir(TEAM).glob("*.json"):
        os.utime(f, ns=(then, then))


def test_the_board_is_the_task_list_as_a_view_shows_it(tasks: TaskStore) -> None:
    assert tasks.board(TEAM) == [BoardTask.of(t) for t in tasks.list_tasks(TEAM)]
    assert [(t.id, t.status, t.owner, t.blocked_by, t.blocks) for t in tasks.board(TEAM)] == [
        ("1", "completed", "alice", [], []), ("2", "in_progress", "bob", [], ["3"]), ("3", "pending", None, ["2"], []),
    ]  # fmt: skip


def test_a_current_copy_means_no_task_file_is_read(tasks: TaskStore, layout: Layout) -> None:
    _age(layout)
    first = tasks.board(TEAM)
    assert layout.board_copy_file(TEAM).is_file()
    with counting_task_reads() as reads:
        assert tasks.board(TEAM) == first
    assert sum(reads.values()) == 0, reads


def test_a_rewritten_file_is_read_again(tasks: TaskStore, layout: Layout) -> None:
    _age(layout)
    tasks.board(TEAM)
    tasks.update(TEAM, "3", status="in_progress", owner="alice")  # the store's own write: a new file, now
    with counting_task_reads() as reads:
        assert tasks.board(TEAM)[2] == BoardTask("3", "three", "in_progress", "alice", ["2"], [])
    assert dict(reads) == {"3": 1}


def test_a_rewrite_in_place_of_the_same_size_is_seen(tasks: TaskStore, layout: Layout) -> None:
    # Claude Code rewrites a task file in place (same inode, here the same size): only the mtime tells, so a file as
    # recent as the kernel's clock step is never taken from the copy
    path = layout.task_dir(TEAM) / "1.json"
    tasks.board(TEAM)  # all recent: nothing kept, nothing written
    assert not layout.board_copy_file(TEAM).exists()
    _age(layout)
    tasks.board(TEAM)
    body = path.read_text()
    kept = os.stat(path)
    with open(path, "r+", encoding="utf-8") as f:  # same size, same inode: alice -> bobby would not fit; carol does
        f.write(body.replace('"alice"', '"carol"'))
    assert os.stat(path).st_size == kept.st_size and os.stat(path).st_ino == kept.st_ino
    assert tasks.board(TEAM)[0].owner == "carol"


def test_a_racily_recent_file_is_read_each_time(tasks: TaskStore, layout: Layout) -> None:
    _age(layout)
    now = time.time_ns() - RACY_NS // 2
    os.utime(layout.task_dir(TEAM) / "2.json", ns=(now, now))
    tasks.board(TEAM)
    with counting_task_reads() as reads:
        tasks.board(TEAM)
    assert dict(reads) == {"2": 1}


def test_a_new_list_of_the_same_name_takes_nothing_from_the_old_copy(tasks: TaskStore, layout: Layout) -> None:
    _age(layout)
    tasks.board(TEAM)
    task_dir = layout.task_dir(TEAM)
    stats = {f.name: os.stat(f) for f in task_dir.glob("*.json")}
    shutil.rmtree(task_dir)
    write_board(layout, TEAM, [{"subject": "uno"}, {"subject": "dos"}, {"subject": "tres"}])
    for name, st in stats.items():  # even with the old files' times (and, on some file systems, their inodes)
        os.utime(task_dir / name, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert [t.subject for t in tasks.board(TEAM)] == ["uno", "dos", "tres"]


def test_a_corrupt_file_is_moved_aside_and_reported_as_by_the_list(
    tasks: TaskStore, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    monkeypatch.setattr(diagnostics, "warning", lambda message, *args: said.append(message % args))
    (layout.task_dir(TEAM) / "2.json").write_text('{"id": "2", "subject": 7}')
    assert [t.id for t in tasks.board(TEAM)] == ["1", "3"]
    assert not (layout.task_dir(TEAM) / "2.json").exists()
    assert len(said) == 1 and "subject" in said[0], said


def test_a_task_file_that_is_a_link_is_refused(tasks: TaskStore, layout: Layout, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"id": "4", "subject": "x", "blocks": [], "blockedBy": []}))
    (layout.task_dir(TEAM) / "4.json").symlink_to(outside)
    with pytest.raises(UnsafePathError):
        tasks.board(TEAM)


def test_an_unwritable_copy_leaves_the_view_whole(tasks: TaskStore, layout: Layout) -> None:
    _age(layout)
    copy_dir = layout.board_copy_file(TEAM).parent
    copy_dir.parent.mkdir(parents=True, exist_ok=True)
    copy_dir.write_text("a file where the directory would be")
    assert [t.subject for t in tasks.board(TEAM)] == ["one", "two", "three"]


def test_a_task_added_or_deleted_since_the_copy_shows(tasks: TaskStore, layout: Layout) -> None:
    """The copy's order stands in for a sort of the listing only while the listing has the very same task files."""
    _age(layout)
    tasks.board(TEAM)
    new = {"id": "10", "subject": "four", "description": "", "status": "pending", "blocks": [], "blockedBy": []}
    (layout.task_dir(TEAM) / "10.json").write_text(json.dumps(new))
    with counting_task_reads() as reads:
        assert [t.id for t in tasks.board(TEAM)] == ["1", "2", "3", "10"]
    assert dict(reads) == {"10": 1}
    (layout.task_dir(TEAM) / "2.json").unlink()
    assert [(t.id, t.subject) for t in tasks.board(TEAM)] == [("1", "one"), ("3", "three"), ("10", "four")]


def test_a_copy_of_another_shape_is_not_trusted(tasks: TaskStore, layout: Layout) -> None:
    _age(layout)
    tasks.board(TEAM)
    copy = layout.board_copy_file(TEAM)
    doc = json.loads(copy.read_text())
    doc["rows"][0][5] = "not what the file says"
    copy.write_text(json.dumps(doc | {"version": 1}))  # an older version's copy: read nothing from it
    assert tasks.board(TEAM)[0].subject == "one"
    copy.write_text(json.dumps({"version": 2, "dir_inode": doc["dir_inode"], "rows": [["1.json", 1], 7]}))
    assert [t.subject for t in tasks.board(TEAM)] == ["one", "two", "three"]
