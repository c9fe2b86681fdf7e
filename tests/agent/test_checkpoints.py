"""The store of file checkpoints: content kept per prompt, rewinds and their counts, links and outsiders left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.agent.checkpoints import NOT_FOUND, FileCheckpoints, for_session, line_counts
from agentteams.errors import AgentTeamsError


def test_only_the_sdk_variable_enables_them(tmp_path: Path) -> None:
    assert for_session([tmp_path], {}) is None
    assert for_session([tmp_path], {"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true"}) is not None


def test_a_rewind_restores_changed_files_and_deletes_created_ones(tmp_path: Path) -> None:
    kept, made = tmp_path / "kept.txt", tmp_path / "made.txt"
    kept.write_text("a\nb\n")
    store = FileCheckpoints([tmp_path])
    store.snapshot("m1")
    store.before_change(kept)
    kept.write_text("a\nB\nc\n")
    store.snapshot("m2")
    store.before_change(made)
    made.write_text("new\n")
    assert store.rewind("m1", dry_run=True) == {"canRewind": True, "filesChanged": [str(kept), str(made)],
                                                "insertions": 1, "deletions": 3}  # fmt: skip
    assert store.rewind("m2", dry_run=False) == {"canRewind": True, "skippedLinks": 0}
    assert not made.exists() and kept.read_text() == "a\nB\nc\n"
    store.rewind("m1", dry_run=False)
    assert kept.read_text() == "a\nb\n"
    assert store.rewind("m1", dry_run=True)["filesChanged"] == []


def test_an_unknown_message_is_claude_s_error(tmp_path: Path) -> None:
    store = FileCheckpoints([tmp_path])
    assert store.rewind("nope", dry_run=True) == {"canRewind": False, "error": NOT_FOUND}
    with pytest.raises(AgentTeamsError, match=NOT_FOUND):
        store.rewind("nope", dry_run=False)


def test_files_outside_or_through_links_are_never_tracked_or_written(tmp_path: Path) -> None:
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    store = FileCheckpoints([inside])
    store.snapshot("m1")
    store.before_change(outside / "x.txt")
    assert store.order == []
    (inside / "d").mkdir()
    store.before_change(inside / "d" / "f.txt")
    (inside / "d" / "f.txt").write_text("f\n")
    (inside / "d" / "f.txt").unlink()
    (inside / "d").rmdir()
    (inside / "d").symlink_to(outside)  # the directory swapped for a link out
    (outside / "f.txt").write_text("outside\n")
    assert store.rewind("m1", dry_run=False) == {"canRewind": True, "skippedLinks": 1}
    assert (outside / "f.txt").read_text() == "outside\n"


def test_line_counts_are_from_now_to_then() -> None:
    assert line_counts(b"two\nthree\n", None) == (0, 2)
    assert line_counts(None, b"one\n") == (1, 0)
