"""A permission question's line: a session leading a team names who asks ("The lead", "Teammate amy"); a session
without one asks the person in its own voice, as claude 2.1.332 does (its question names no one: seen in tmux)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.ui.permission_prompt import shown

CASES = [
    ("Bash", {"command": "touch made.txt"}, "Run this command (why)?", "The lead wants to run a command (why)."),
    ("Write", {"file_path": "/nowhere/w.txt", "content": "x"}, "Create /nowhere/w.txt (why)?",
     "The lead wants to create /nowhere/w.txt (why)."),
    ("Edit", {"file_path": "/nowhere/f.py", "old_string": "a", "new_string": "b"},
     "Make this edit to /nowhere/f.py (why)?", "The lead wants to edit /nowhere/f.py (why)."),
    ("NotebookEdit", {"notebook_path": "/n.ipynb", "new_source": "x"}, "Edit the notebook /n.ipynb (why)?",
     "The lead wants to edit the notebook /n.ipynb (why)."),
    ("ExitPlanMode", {"plan": "p"}, "Leave plan mode and start on this plan?",
     "The lead has a plan and wants to leave plan mode and start on it."),
    ("Glob", {"pattern": "*.py"}, "Allow Glob(*.py) (why)?", "The lead wants to use Glob(*.py) (why)."),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "args", "solo", "team"), CASES)
def test_a_solo_session_asks_in_its_own_voice_and_a_lead_names_itself(
    tool: str, args: dict[str, object], solo: str, team: str
) -> None:
    alone, leading = shown(None, tool, args, "why", Path("/tmp")), shown("The lead", tool, args, "why", Path("/tmp"))
    assert (alone.text, leading.text) == (solo, team)
    assert "lead" not in alone.text.lower()
    assert (alone.detail, alone.always, alone.accept_edits) == (leading.detail, leading.always, leading.accept_edits)
