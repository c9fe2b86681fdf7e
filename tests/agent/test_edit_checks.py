"""An Edit claude 2.1.332 validates fails as the model's error before any hook, rule or question (not as a
permission denial), and a turn counts the tool calls of one answer past its first (num_turns)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentteams.agent.session import Session, SessionOptions
from agentteams.store.paths import Layout
from tests.support.fake_model import FakeModel, text, tool


def results(model: FakeModel) -> list[tuple[bool, str]]:
    """Each tool result the model was sent: (is_error, content)."""
    out = []
    for request in model.requests:
        last: Any = request.messages[-1]["content"]
        if isinstance(last, list):
            out += [(bool(b.get("is_error")), str(b["content"])) for b in last if b.get("type") == "tool_result"]
    return out


def test_validation_comes_before_the_permission_check(tmp_path: Path, layout: Layout) -> None:
    (tmp_path / "x.txt").write_text("old aa aa\n")
    (tmp_path / "nb.ipynb").write_text("{}")
    edits = [("missing.txt", "a", "b"), ("x.txt", "old", "old"), ("x.txt", "zzz", "b"), ("x.txt", "aa", "bb"),
             ("nb.ipynb", "a", "b"), ("x.txt", "old", "new")]  # fmt: skip
    model = FakeModel([*([tool("Edit", file_path=str(tmp_path / f), old_string=o, new_string=n)] for f, o, n in edits),
                       [text("done")]])  # fmt: skip
    s = Session(SessionOptions(cwd=tmp_path), model, layout=layout)  # -p: nobody to ask, an edit is refused
    s.run("edit")
    said = results(model)
    assert [error for error, _ in said] == [True] * 6
    assert [c.split(":")[0].split(" ")[0] for _e, c in said[:5]] == ["File", "No", "old_string", "old_string",
                                                                     str(tmp_path / "nb.ipynb")]  # fmt: skip
    assert "Permission denied" in said[5][1]
    assert [d["tool_input"]["file_path"] for d in s.agent.denials] == [str(tmp_path / "x.txt")]  # the last only
    assert (tmp_path / "x.txt").read_text() == "old aa aa\n"


def test_a_turn_counts_the_calls_of_an_answer_past_its_first(tmp_path: Path, layout: Layout) -> None:
    (tmp_path / "x.txt").write_text("x\n")
    read = tool("Read", file_path=str(tmp_path / "x.txt"))
    model = FakeModel([[read, read, read], [read], [text("done")]])
    s = Session(SessionOptions(cwd=tmp_path), model, layout=layout)
    result = s.run("read")
    assert (result.model_calls, result.beside) == (3, 2)  # claude 2.1.332's num_turns: 5
