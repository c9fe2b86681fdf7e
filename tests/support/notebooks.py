"""Real .ipynb files for the notebook tests, made and read back (and validated) with nbformat."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

nbformat: Any = importlib.import_module("nbformat")  # untyped: reached through Any


def make_notebook(path: Path, minor: int = 5) -> Path:
    """A markdown cell `intro` (# Title) and a code cell `calc` with one stdout output; format 4.`minor` (before
    4.5 cells have no ids)."""
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("x = 1\nprint(x)", execution_count=1)
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), code]
    nb.cells[0]["id"], nb.cells[1]["id"] = "intro", "calc"
    if minor < 5:
        nb.nbformat_minor = minor
        for cell in nb.cells:
            del cell["id"]
    nbformat.write(nb, str(path))
    return path


def reread(path: Path) -> Any:
    """The notebook on disk, validated by nbformat (which raises if it is not a valid notebook)."""
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    return nb
