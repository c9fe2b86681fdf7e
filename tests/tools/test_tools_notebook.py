"""NotebookEdit and Read of .ipynb files: cells replaced, inserted and deleted by id (or `cell-N`) in a real notebook
that nbformat then validates; Claude Code's checks (read first, cell type for insert, cell id otherwise); the cells
Read shows; permission rules on the notebook's path."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentteams.agent.session import Session, SessionOptions
from agentteams.store.paths import Layout
from agentteams.tools.base import ToolContext, ToolInputError, ToolResult
from agentteams.tools.files.notebook_edit import NotebookEditTool
from agentteams.tools.files.read_write_edit import ReadTool
from tests.support.fake_model import FakeModel, text, tool
from tests.support.notebooks import make_notebook, reread


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, store=None, session_id="s")  # type: ignore[arg-type]


def edit(ctx: ToolContext, path: Path, **args: object) -> ToolResult:
    return NotebookEditTool().run({"notebook_path": str(path), **args}, ctx)


def test_read_shows_the_cells_and_their_outputs(ctx: ToolContext, tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "nb.ipynb")
    result = ReadTool().run({"file_path": str(path)}, ctx)
    expected = ('<cell id="intro"><cell_type>markdown</cell_type># Title</cell id="intro">\n'
                '<cell id="calc">x = 1\nprint(x)</cell id="calc">\n\n1\n')  # fmt: skip
    assert not result.is_error and result.content == expected
    assert result.wire() == [{"type": "text", "text": expected}]  # one text block, as Claude Code sends it


def test_replace_insert_and_delete_leave_a_valid_notebook(ctx: ToolContext, tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "nb.ipynb")
    ReadTool().run({"file_path": str(path)}, ctx)
    assert edit(ctx, path, cell_id="calc", new_source="y = 2").content == "Updated cell calc with y = 2"
    calc = reread(path).cells[1]
    assert (calc.source, calc.outputs, calc.execution_count) == ("y = 2", [], None)  # stale outputs go
    inserted = edit(ctx, path, cell_id="intro", new_source="## Part", cell_type="markdown", edit_mode="insert")
    assert inserted.content.startswith("Inserted cell ") and inserted.content.endswith(" with ## Part")
    first = edit(ctx, path, new_source="import os", cell_type="code", edit_mode="insert")
    assert not first.is_error
    nb = reread(path)
    assert [c.source for c in nb.cells] == ["import os", "# Title", "## Part", "y = 2"]
    assert len({c.id for c in nb.cells}) == 4
    assert edit(ctx, path, cell_id="intro", new_source="", edit_mode="delete").content == "Deleted cell intro"
    assert edit(ctx, path, cell_id="cell-0", new_source="as md", cell_type="markdown").content.startswith("Updated")
    nb = reread(path)
    assert [(c.cell_type, c.source) for c in nb.cells] == [("markdown", "as md"), ("markdown", "## Part"),
                                                           ("code", "y = 2")]  # fmt: skip


def test_an_old_format_notebook_gets_no_cell_ids(ctx: ToolContext, tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "old.ipynb", minor=4)
    assert '<cell id="cell-1">' in ReadTool().run({"file_path": str(path)}, ctx).content
    assert not edit(ctx, path, cell_id="cell-1", new_source="z", edit_mode="insert", cell_type="code").is_error
    nb = reread(path)
    assert nb.nbformat_minor == 4 and [c.source for c in nb.cells][-1] == "z" and "id" not in nb.cells[-1]


def test_claude_codes_checks(ctx: ToolContext, tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "nb.ipynb")
    assert "has not been read yet" in edit(ctx, path, cell_id="calc", new_source="z").content
    ReadTool().run({"file_path": str(path)}, ctx)
    with pytest.raises(ToolInputError, match="Cell type is required"):
        edit(ctx, path, new_source="z", edit_mode="insert")
    with pytest.raises(ToolInputError, match="Cell ID must be specified"):
        edit(ctx, path, new_source="z")
    with pytest.raises(ToolInputError, match='Cell with ID "nope" not found'):
        edit(ctx, path, cell_id="nope", new_source="z")
    with pytest.raises(ToolInputError):
        edit(ctx, path, cell_id="calc", new_source="z", edit_mode="append")
    (tmp_path / "a.py").write_text("x\n")
    assert edit(ctx, tmp_path / "a.py", cell_id="calc", new_source="z").is_error
    before = path.read_bytes()
    path.touch()  # changed on disk since it was read
    assert "modified since" in edit(ctx, path, cell_id="calc", new_source="z").content
    assert path.read_bytes() == before


def test_a_deny_rule_on_the_path_refuses_the_edit(tmp_path: Path, layout: Layout) -> None:
    path = make_notebook(tmp_path / "nb.ipynb")
    model = FakeModel([[tool("Read", file_path=str(path))],
                       [tool("NotebookEdit", notebook_path=str(path), cell_id="calc", new_source="BAD")],
                       [text("done")]])  # fmt: skip
    options = SessionOptions(cwd=tmp_path, permission_mode="bypassPermissions", disallowed_tools=["Edit(*.ipynb)"])
    Session(options, model, layout=layout).run("edit it")
    assert "BAD" not in path.read_text()
    assert "denied" in model.user_text(2).lower() or "not allowed" in model.user_text(2).lower(), model.user_text(2)
