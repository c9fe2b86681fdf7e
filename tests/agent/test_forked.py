"""A forked teammate's seed (agent/forked.py): its opening answers every call of its lead's newest answer and says who
it is after the shared prefix; the seed file a pane teammate takes is read once, and a missing one is one warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.agent.forked import STARTED_YOU, ForkSeed
from agentteams.agent.prompts import Identity
from agentteams.agent.subagents import PARENTS_CALL
from agentteams.model.types import ToolSpec

ANSWER = {"role": "assistant", "content": [
    {"type": "text", "text": "Two things at once."},
    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.txt"}},
    {"type": "tool_use", "id": "t2", "name": "Task", "input": {"name": "forky", "team_name": "proj",
                                                             "subagent_type": "fork", "prompt": "go"}},
]}  # fmt: skip


def seed() -> ForkSeed:
    tools = [ToolSpec("Read", "read a file", {"type": "object"})]
    return ForkSeed("claude-opus-5-5", "You lead a team.", "memory", tools, [{"role": "user", "content": "go"}, ANSWER])


def test_the_opening_answers_each_call_and_says_who_it_is_after_the_prefix() -> None:
    opening = seed().opening(Identity("forky", "proj"))
    assert [(b.get("tool_use_id"), b.get("content")) for b in opening[:2]] == [("t1", PARENTS_CALL),
                                                                                 ("t2", STARTED_YOU)]  # fmt: skip
    text = opening[2]["text"]
    assert "You are forky, a teammate of team 'proj'" in text and "Your name is forky" in text


def test_a_seed_file_is_taken_once_and_a_missing_one_is_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "forks" / "proj" / "forky.json"
    seed().write(path)
    assert oct(path.stat().st_mode & 0o777) == "0o600", "it holds the lead's conversation"
    assert ForkSeed.take(path) == seed()
    assert not path.exists()
    assert ForkSeed.take(path) is None
    assert [r.levelname for r in caplog.records] == ["WARNING"] and "is missing" in caplog.text


def test_a_forked_teammate_is_refused_in_one_line_where_it_cannot_start(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from agentteams.team.spawn.member import _fork_seed
    from agentteams.tools.base import ToolInputError

    session, spawner = SimpleNamespace(agent=None), SimpleNamespace(backend="in-process")
    fork = {"name": "forky", "team_name": "proj", "subagent_type": "fork", "prompt": "go"}
    assert _fork_seed(session, spawner, {**fork, "subagent_type": "Explore"}) is None  # type: ignore[arg-type]
    for args, said in (({**fork, "node": "gpu1"}, "leave out node and repo"), ({**fork, "repo": "u"}, "node and repo")):
        with pytest.raises(ToolInputError, match=said):
            _fork_seed(session, spawner, args)  # type: ignore[arg-type]
    monkeypatch.setenv("CLAUDE_CODE_FORK_SUBAGENT", "0")
    with pytest.raises(ToolInputError, match="CLAUDE_CODE_FORK_SUBAGENT turns forks off"):
        _fork_seed(session, spawner, fork)  # type: ignore[arg-type]
