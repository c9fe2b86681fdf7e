"""NotebookEdit, as Claude Code's: replace, insert or delete one cell of a notebook that was read first."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, cast

from agentteams.tools.base import ToolContext, ToolInputError, ToolResult
from agentteams.tools.files.notebook import CELL_TYPES, EditMode, apply_edit, nbformat_module, write_notebook
from agentteams.tools.files.read_write_edit import (
    FileTool,
    changing,
    not_a_file,
    opt_str_arg,
    remember,
    resolve_path,
    stale_reason,
    str_arg,
)


class NotebookEditTool(FileTool):
    name = "NotebookEdit"
    description = (
        "Replace, insert or delete one cell of a Jupyter notebook (.ipynb). Read the notebook first; cells are "
        "named by the id Read shows (`<cell id=…>`). edit_mode: replace (default) sets the cell's source (and "
        "type, if given); insert adds a cell after cell_id (at the start without one) and needs cell_type; delete "
        "removes the cell. A replaced code cell loses its outputs."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "notebook_path": {"type": "string", "description": "Absolute path of the notebook"},
            "cell_id": {"type": "string", "description": "The cell to edit; with insert, the cell to insert after"},
            "new_source": {"type": "string", "description": "The cell's new source"},
            "cell_type": {"type": "string", "enum": list(CELL_TYPES), "description": "Required for insert"},
            "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"], "description": "Default: replace"},
        },
        "required": ["notebook_path", "new_source"],
        "additionalProperties": False,
    }
    kind = "edit"

    def permission_target(self, args: dict[str, Any], cwd: Path | None = None) -> str | None:
        raw = args.get("notebook_path")
        return str(resolve_path(raw, cwd)) if isinstance(raw, str) and raw else None

    def check(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """As claude 2.1.332 validates it before asking: a notebook that exists and was Read, unchanged since."""
        try:
            path = self._args(args, ctx)[0]
        except ToolInputError as e:
            return str(e)
        if path.suffix != ".ipynb":
            return f"{path} is not a Jupyter notebook (.ipynb); use Edit for other files"
        return not_a_file(path) or stale_reason(ctx, path, "editing")

    def _args(self, args: dict[str, Any], ctx: ToolContext) -> tuple[Path, str, str | None, str | None, str]:
        path = resolve_path(str_arg(args, "notebook_path"), ctx.cwd)
        source = str_arg(args, "new_source")
        cell_id, kind = opt_str_arg(args, "cell_id"), opt_str_arg(args, "cell_type")
        mode = args.get("edit_mode") or "replace"
        if mode not in ("replace", "insert", "delete"):
            raise ToolInputError("`edit_mode` must be replace, insert or delete")
        if kind is not None and kind not in CELL_TYPES:
            raise ToolInputError("`cell_type` must be code or markdown")
        return path, source, cell_id, kind, mode

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, source, cell_id, kind, mode = self._args(args, ctx)
        if (problem := self.check(args, ctx)) is not None:  # again: the file may have changed since
            return ToolResult.error(problem)
        try:
            nb = nbformat_module().read(str(path), as_version=4)
        except Exception as exc:  # see read_notebook
            return ToolResult.error(f"Cannot read {path} as a Jupyter notebook: {exc}")
        said = apply_edit(nb, cast(EditMode, mode), cell_id, kind, source)
        changing(ctx, path)
        failed = write_notebook(nb, path)
        if failed:
            return ToolResult.error(failed)
        remember(ctx, path)
        return ToolResult(said, data={"notebook_path": str(path), "edit_mode": mode, "cell_id": cell_id})
