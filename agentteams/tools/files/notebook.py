"""Jupyter notebooks through `nbformat` (its one importer): Read's view of an .ipynb file (cells with their ids, then
each code cell's text outputs), and NotebookEdit's one-cell edits, written atomically."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Any, Literal

from agentteams.tools.base import ToolContext, ToolInputError, ToolResult

EditMode = Literal["replace", "insert", "delete"]
CELL_TYPES = ("code", "markdown")
MAX_OUTPUT_CHARS = 10_000  # one output's text in a Read; more is cut
INDEX_ID = re.compile(r"cell-(\d+)")  # how Claude Code names a cell that has no id: by its position


def nbformat_module() -> Any:
    import nbformat  # imported when a notebook is first touched: it loads jsonschema

    return nbformat


def _output_text(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        text = output.get("text", "")
    elif kind in ("execute_result", "display_data"):
        text = output.get("data", {}).get("text/plain", "")
    elif kind == "error":
        text = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    else:
        text = ""
    text = "".join(text) if isinstance(text, list) else str(text)
    return text if len(text) <= MAX_OUTPUT_CHARS else f"{text[:MAX_OUTPUT_CHARS]}\n[... output cut ...]"


def render_cells(nb: Any) -> str:
    """Each cell as `<cell id="…">` (a markdown or raw cell says its type) then each of its outputs' text."""
    parts = []
    for i, cell in enumerate(nb.cells):
        cell_id = cell.get("id") or f"cell-{i}"
        kind = "" if cell.cell_type == "code" else f"<cell_type>{cell.cell_type}</cell_type>"
        text = f'<cell id="{cell_id}">{kind}{cell.source}</cell id="{cell_id}">'
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if shown := _output_text(output):
                text += f"\n{shown}" if shown.startswith("\n") else f"\n\n{shown}"
        parts.append(text)
    return "\n".join(parts)


def read_notebook(path: Path, ctx: ToolContext) -> ToolResult:
    """Read's answer for an .ipynb file: its cells, as one text block (as Claude Code sends it)."""
    mtime = path.stat().st_mtime
    try:
        nb = nbformat_module().read(str(path), as_version=4)
    except Exception as exc:  # nbformat raises many kinds (JSON, schema, version): all mean "not a notebook"
        return ToolResult.error(f"Cannot read {path} as a Jupyter notebook: {exc}")
    ctx.read_files[path] = mtime
    text = render_cells(nb) or f"{path} is a notebook with no cells."
    data = {"file_path": str(path), "cells": len(nb.cells)}
    return ToolResult(text, data=data, blocks=[{"type": "text", "text": text}])


def find_cell(nb: Any, cell_id: str) -> int | None:
    """The position of the cell with this id (or, for `cell-N`, the N-th cell when none has that id)."""
    for i, cell in enumerate(nb.cells):
        if cell.get("id") == cell_id:
            return i
    numbered = INDEX_ID.fullmatch(cell_id)
    if numbered and int(numbered.group(1)) < len(nb.cells):
        return int(numbered.group(1))
    return None


def new_cell(nb: Any, kind: str, source: str, cell_id: str | None) -> Any:
    v4 = nbformat_module().v4
    cell = v4.new_code_cell(source) if kind == "code" else v4.new_markdown_cell(source)
    if nb.nbformat_minor >= 5:
        cell["id"] = cell_id or secrets.token_hex(4)
    else:
        cell.pop("id", None)  # cell ids came with format 4.5: an older notebook must not get one
    return cell


def apply_edit(nb: Any, mode: EditMode, cell_id: str | None, kind: str | None, source: str) -> str:
    """Change `nb` in place; the sentence saying what was done (ToolInputError for an edit that cannot be)."""
    if mode != "insert" and not cell_id:
        raise ToolInputError("Cell ID must be specified when not inserting a new cell.")
    if mode == "insert" and not kind:
        raise ToolInputError("Cell type is required when using edit_mode=insert.")
    index = find_cell(nb, cell_id) if cell_id else -1
    if index is None:
        raise ToolInputError(f'Cell with ID "{cell_id}" not found in notebook.')
    if mode == "insert":
        assert kind is not None
        cell = new_cell(nb, kind, source, None)
        nb.cells.insert(index + 1, cell)
        return f"Inserted cell {cell.get('id') or f'cell-{index + 1}'} with {source}"
    if mode == "delete":
        nb.cells.pop(index)
        return f"Deleted cell {cell_id}"
    old = nb.cells[index]
    cell = new_cell(nb, kind or old.cell_type, source, old.get("id"))
    cell["metadata"] = old.get("metadata", {})  # a code cell's outputs and count go: they no longer match its source
    nb.cells[index] = cell
    return f"Updated cell {cell_id} with {source}"


def write_notebook(nb: Any, path: Path) -> str | None:
    """Validate, then write atomically (a temporary file renamed over the notebook), keeping its mode; why not,
    if it cannot be."""
    nbformat = nbformat_module()
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        return f"The edit would leave {path} an invalid notebook ({exc.message}); nothing was written"
    import tempfile  # only when a notebook is written: off every session's start

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(nbformat.writes(nb))
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        return f"Cannot write {path}: {exc.strerror or exc}"
    return None
