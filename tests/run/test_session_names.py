"""A session's name (`-n`, claude's `custom-title` entry) as the resume side reads it: found at the file's head or,
given later, at its end; `-r NAME` takes the newest session of that whole name in any case; the interactive picker
lists the names and its words match them too."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentteams.run.session_choice import ResumeFlags, resolve
from agentteams.store.paths import Layout
from agentteams.store.transcripts.reader import SessionInfo, sessions
from agentteams.ui.picker import listing


def transcript(layout: Layout, cwd: Path, sid: str, prompt: str, title: str | None, *, late: bool = False,
               age: float = 0) -> Path:  # fmt: skip
    path = layout.transcript_file(cwd, sid)
    path.parent.mkdir(parents=True, exist_ok=True)
    named = [{"type": "custom-title", "customTitle": title, "sessionId": sid}] if title else []
    said = {"type": "user", "sessionId": sid, "uuid": f"u-{sid}", "parentUuid": None,
            "message": {"role": "user", "content": prompt}}  # fmt: skip
    filler = [{"type": "queue-operation", "operation": "enqueue", "sessionId": sid, "content": "x" * 300}] * 400
    entries = [said, *filler, *named] if late else [*named, said]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    stamp = 1_700_000_000 - age
    os.utime(path, (stamp, stamp))
    return path


def test_the_name_is_read_at_the_head_and_at_a_long_files_end(layout: Layout, tmp_path: Path) -> None:
    transcript(layout, tmp_path, "a" * 8, "first prompt", "early-name", age=10)
    transcript(layout, tmp_path, "b" * 8, "second prompt", "late-name", late=True)
    transcript(layout, tmp_path, "c" * 8, "third prompt", None, age=20)
    assert [(s.first_prompt, s.title) for s in sessions(layout, tmp_path)] == [
        ("second prompt", "late-name"), ("first prompt", "early-name"), ("third prompt", "")]  # fmt: skip


def test_resume_by_name_takes_the_newest_of_that_whole_name(layout: Layout, tmp_path: Path) -> None:
    transcript(layout, tmp_path, "a" * 8, "older", "Feature", age=30)
    newer = transcript(layout, tmp_path, "b" * 8, "newer", "feature", age=10)
    transcript(layout, tmp_path, "c" * 8, "longer name", "feature two")
    flags = ResumeFlags(cont=False, resume="FEATURE", fork=False, session_id=None)
    found = resolve(flags, layout, tmp_path, interactive=False)
    assert found is not None and found.session_id == newer.stem


def test_the_picker_shows_names_and_its_words_match_them(layout: Layout, tmp_path: Path) -> None:
    transcript(layout, tmp_path, "a" * 8, "fix the parser", "parser-work", age=10)
    transcript(layout, tmp_path, "b" * 8, "unrelated", None)
    shown: list[list[SessionInfo]] = []

    def pick(found: list[SessionInfo]) -> None:
        shown.append(found)  # and left: a new conversation

    flags = ResumeFlags(cont=False, resume="parser-w", fork=False, session_id=None)
    assert resolve(flags, layout, tmp_path, interactive=True, pick=pick) is None
    [offered] = shown
    assert [s.title for s in offered] == ["parser-work"]
    assert "parser-work · fix the parser" in listing(offered)[0]
    assert "\x1b" not in listing([SessionInfo("x", tmp_path, "p", 0, title="evil\x1b]0;t\x07")])[0]
