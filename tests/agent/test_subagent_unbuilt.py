"""A subagent whose agent cannot be built (its settings, prompt or tools fail after its record was opened) still has
its record finished, as one whose run failed: a transcript left unfinished would read as still running."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from agentteams.agent.subagent_run import SubagentCalls
from agentteams.agent.subagents import Subagents
from agentteams.store.transcripts.writer import Transcript
from agentteams.tools.base import ToolContext
from agentteams.tools.spawn_limits import SpawnLimits


def test_a_subagent_that_fails_while_being_built_is_finished(tmp_path: Path) -> None:
    def context() -> str | None:
        raise OSError("the project's CLAUDE.md cannot be read")

    parent = Transcript(tmp_path / "s.jsonl", "s", cwd=str(tmp_path))
    hooks = SimpleNamespace(task_created=None, task_completed=None, for_subagent=None)
    kit = SimpleNamespace(
        client=None, policy=None, store=None, agents=SimpleNamespace(get=lambda name: None), cwd=tmp_path,
        session_id=lambda: "s", interactive=False, max_turns=None, secrets=(), model=lambda: "claude-sonnet-4-5",
        context=context, tools=list, transcript=lambda: parent, calls=SubagentCalls(), hooks=hooks,
        parent_ctx=ToolContext(cwd=tmp_path, store=cast(Any, None), session_id="s"), mode=lambda: "default",
        events_for=None,
    )  # fmt: skip
    subagents = Subagents(cast(Any, kit), SpawnLimits())
    with pytest.raises(OSError, match="cannot be read"):
        subagents.run("general-purpose", "look", None, cast(Any, SimpleNamespace(messages=[])), 0)
    [meta] = (tmp_path / "s" / "subagents").glob("*.meta.json")
    assert json.loads(meta.read_text("utf-8"))["finished"] is True
    assert subagents.running.count == 0  # its slot is given back too
