"""Read, Write and Edit: numbered reads, and writes or exact-text edits of files that were read first.

Paths resolve to absolute ones; `ctx.read_files` keeps each file's mtime as of its last Read or write by us.
"""

from __future__ import annotations

import codecs
import mimetypes
import stat
from pathlib import Path
from typing import IO, Any, ClassVar

from agentteams.tools.base import Tool, ToolContext, ToolInputError, ToolResult, require_str

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
BINARY_SNIFF = 8192
SNIPPET_CONTEXT = 3
SNIPPET_MAX_LINES = 40

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF", "PDF document"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x7fELF", "ELF executable"),
    (b"\x1f\x8b", "gzip archive"),
    (b"BZh", "bzip2 archive"),
    (b"\xfd7zXZ\x00", "xz archive"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\x00asm", "WebAssembly module"),
    (b"\xff\xfe", "UTF-16 text"),
    (b"\xfe\xff", "UTF-16 text"),
    (b"MZ", "Windows executable"),
)


def resolve_path(raw: str, base: Path | None = None) -> Path:
    """`raw` as an absolute path with `~` expanded and symlinks resolved; relative to `base` (else our cwd)."""
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return path.resolve()


def file_target(args: dict[str, Any], cwd: Path | None) -> str | None:
    """What path rules match a file tool's call against: `file_path` made absolute against the agent's cwd."""
    raw = args.get("file_path")
    return str(resolve_path(raw, cwd)) if isinstance(raw, str) and raw else None


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def file_type(path: Path, head: bytes) -> str:
    """A short name for a binary file's kind, from its magic bytes or else its extension."""
    for magic, name in _SIGNATURES:
        if head.startswith(magic):
            return name
    return mimetypes.guess_type(path.name)[0] or "binary data"


def is_binary(path: Path) -> bool:
    """Whether the file has a NUL byte in its first 8 KiB (OSError if it cannot be read)."""
    with path.open("rb") as stream:
        return b"\0" in stream.read(BINARY_SNIFF)


def numbered(number: int, line: str) -> str:
    """One line as `cat -n` prints it: the number right-aligned in 6 columns, a tab, the text."""
    return f"{number:>6}\t{line}"


def int_arg(args: dict[str, Any], key: str, default: int, minimum: int) -> int:
    value = args.get(key)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ToolInputError(f"`{key}` must be an integer of at least {minimum}")
    return value


def str_arg(args: dict[str, Any], key: str) -> str:
    """A required string argument that may be empty."""
    value = args.get(key)
    if not isinstance(value, str):
        raise ToolInputError(f"`{key}` is required and must be a string")
    return value


def opt_str_arg(args: dict[str, Any], key: str) -> str | None:
    """An optional string argument; None when absent or empty."""
    value = args.get(key)
    if value is not None and not isinstance(value, str):
        raise ToolInputError(f"`{key}` must be a string")
    return value or None


def flag_arg(args: dict[str, Any], key: str, default: bool) -> bool:
    value = args.get(key, default)
    if not isinstance(value, bool):
        raise ToolInputError(f"`{key}` must be true or false")
    return value


def path_arg(args: dict[str, Any], ctx: ToolContext) -> Path:
    return resolve_path(require_str(args, "file_path"), ctx.cwd)


def not_a_file(path: Path) -> str | None:
    """Why `path` cannot be read as a file, or None."""
    if not path.exists():
        return f"File does not exist: {path}"
    if path.is_dir():
        return f"{path} is a directory, not a file; list it with Glob or `ls` instead"
    if not stat.S_ISREG(path.stat().st_mode):
        return f"{path} is not a regular file (a device, pipe or socket); it cannot be read"
    return None


def stale_reason(ctx: ToolContext, path: Path, doing: str) -> str | None:
    """Why an existing file may not be changed yet: never Read, or changed on disk since, else None."""
    if not path.exists():
        return None
    recorded = ctx.read_files.get(path)
    if recorded is None:
        return f"{path} has not been read yet. Read it first before {doing} it."
    if path.stat().st_mtime != recorded:
        return (
            f"{path} has been modified since it was last read (by the user or another program). "
            f"Read it again before {doing} it."
        )
    return None


def changing(ctx: ToolContext, path: Path) -> None:
    """Tell the session a file tool is about to change `path` (a checkpoint keeps its content first, if enabled)."""
    if ctx.hooks.file_changing is not None:
        ctx.hooks.file_changing(path)


def remember(ctx: ToolContext, path: Path) -> None:
    ctx.read_files[path] = path.stat().st_mtime


def _decode_line(raw: bytes, first: bool) -> str:
    line = raw.rstrip(b"\n").removesuffix(b"\r").decode("utf-8", errors="replace")
    if first:
        line = line.removeprefix("\ufeff")
    if len(line) > MAX_LINE_CHARS:
        line = f"{line[:MAX_LINE_CHARS]}... [line truncated: {len(line) - MAX_LINE_CHARS} more characters]"
    return line


def read_numbered(stream: IO[bytes], offset: int, limit: int) -> tuple[list[str], int]:
    """The numbered lines `offset`..`offset+limit-1` (1-based) of the stream, and its total line count."""
    shown: list[str] = []
    total = 0
    for total, raw in enumerate(stream, 1):
        if offset <= total < offset + limit:
            shown.append(numbered(total, _decode_line(raw, total == 1)))
    return shown, total


class FileTool(Tool):
    """A tool whose call names one file: permission rules match that file's absolute path."""

    def permission_target(self, args: dict[str, Any], cwd: Path | None = None) -> str | None:
        return file_target(args, cwd)


class ReadTool(FileTool):
    name = "Read"
    description = (
        "Read a text file. Returns its lines numbered like `cat -n` (number, tab, text); by default up "
        f"to {MAX_LINES} lines from the start; use offset (1-based line) and limit to read a part of a long file. "
        f"Lines longer than {MAX_LINE_CHARS} characters are cut. Binary files and directories are refused."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Absolute path of the file to read"},
            "offset": {"type": "integer", "description": "First line to read, 1-based"},
            "limit": {"type": "integer", "description": f"How many lines to read (default {MAX_LINES})"},
        },
        "required": ["file_path"],
        "additionalProperties": False,
    }
    kind = "read"

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = path_arg(args, ctx)
        offset = max(int_arg(args, "offset", 1, minimum=0), 1)
        limit = int_arg(args, "limit", MAX_LINES, minimum=1)
        try:
            problem = not_a_file(path)
            if problem:
                return ToolResult.error(problem)
            if path.suffix == ".ipynb":
                from agentteams.tools.files.notebook import read_notebook  # nbformat only once a notebook is read

                return read_notebook(path, ctx)
            mtime = path.stat().st_mtime
            with path.open("rb") as stream:
                head = stream.read(BINARY_SNIFF)
                if b"\0" in head:
                    size = human_size(path.stat().st_size)
                    return ToolResult.error(
                        f"Cannot read {path}: it is a binary file ({file_type(path, head)}, {size}), not text"
                    )
                stream.seek(0)
                shown, total = read_numbered(stream, offset, limit)
        except OSError as exc:
            return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
        ctx.read_files[path] = mtime
        data = {"file_path": str(path), "total_lines": total, "lines_shown": len(shown)}
        if total == 0:
            return ToolResult(f"{path} exists but is empty.", data=data)
        if not shown:
            return ToolResult(f"{path} has {total} lines; offset {offset} is past the end.", data=data)
        text = "\n".join(shown)
        last = offset + len(shown) - 1
        if offset > 1 or last < total:
            text += f"\n\n(Showing lines {offset}-{last} of {total}; use offset and limit to read other parts.)"
        return ToolResult(text, data=data)


def _count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


class WriteTool(FileTool):
    name = "Write"
    description = (
        "Write a file, replacing it if it exists and creating missing parent directories. An existing file "
        "must have been Read first in this session and not changed since. Prefer Edit for changing part of a file."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Absolute path of the file to write"},
            "content": {"type": "string", "description": "The complete new content of the file"},
        },
        "required": ["file_path", "content"],
        "additionalProperties": False,
    }
    kind = "edit"

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = path_arg(args, ctx)
        content = str_arg(args, "content")
        existed = path.exists()
        problem = (not_a_file(path) if existed else None) or stale_reason(ctx, path, "writing")
        if problem:
            return ToolResult.error(problem)
        try:
            changing(ctx, path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content.encode("utf-8"))
            remember(ctx, path)
        except (OSError, UnicodeEncodeError) as exc:
            return ToolResult.error(f"Cannot write {path}: {exc}")
        verb = "Updated" if existed else "Created"
        data = {"file_path": str(path), "type": "update" if existed else "create"}
        return ToolResult(f"{verb} {path} ({_count_lines(content)} lines)", data=data)


def load_text(path: Path) -> tuple[str, bool]:
    """A file's UTF-8 text and whether it starts with a BOM; ValueError with the reason if it is not text."""
    data = path.read_bytes()
    if b"\0" in data[:BINARY_SNIFF]:
        raise ValueError(f"{path} is a binary file ({file_type(path, data[:64])}); Edit only changes text files")
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        return data[len(codecs.BOM_UTF8) if bom else 0 :].decode("utf-8"), bom
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not valid UTF-8 ({exc.reason} at byte {exc.start}); Edit cannot change it"
        ) from exc


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def find_target(text: str, old: str, new: str) -> tuple[str, str, int]:
    """`old` and `new` in the file's line-ending style, and how often `old` occurs."""
    if "\r\n" in text and text.count("\r\n") * 2 > text.count("\n"):
        old_crlf, new_crlf = _crlf(old), _crlf(new)
        count = text.count(old_crlf)
        if count:
            return old_crlf, new_crlf, count
    return old, new, text.count(old)


def snippet(text: str, start: int, length: int) -> str:
    """Numbered lines around `text[start:start+length]`, with a few lines of context."""
    first = text.count("\n", 0, start) + 1
    last = first + text.count("\n", start, start + length)
    lines = text.split("\n")
    lo = max(first - SNIPPET_CONTEXT, 1)
    hi = min(last + SNIPPET_CONTEXT, len(lines), lo + SNIPPET_MAX_LINES - 1)
    return "\n".join(numbered(n, lines[n - 1].removesuffix("\r")) for n in range(lo, hi + 1))


class EditTool(FileTool):
    name = "Edit"
    description = (
        "Replace exact text in a file that was Read first in this session. old_string must match the file "
        "exactly (whitespace and indentation included; no line-number prefixes) and occur exactly once, "
        "unless replace_all is true. An empty old_string creates a file that does not exist yet."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "Absolute path of the file to change"},
            "old_string": {"type": "string", "description": "The exact text to replace"},
            "new_string": {"type": "string", "description": "The text to put in its place (must differ)"},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)"},
        },
        "required": ["file_path", "old_string", "new_string"],
        "additionalProperties": False,
    }
    kind = "edit"

    def check(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """As claude 2.1.332 validates an Edit before asking: the same text, a notebook, a missing file, a file that
        is no text or lacks old_string (or has it more than once) fail as the model's error, not as a denial."""
        try:
            path, old, new = path_arg(args, ctx), str_arg(args, "old_string"), str_arg(args, "new_string")
            replace_all = flag_arg(args, "replace_all", False)
        except ToolInputError as e:
            return str(e)
        if old == new:
            return "No changes to make: old_string and new_string are exactly the same."
        if path.suffix == ".ipynb":
            return f"{path} is a Jupyter notebook: change its cells with NotebookEdit"
        if not path.exists():
            return None if old == "" else f"File does not exist: {path}"
        try:
            return not_a_file(path) or self._unmatched(path, load_text(path)[0], old, new, replace_all)
        except ValueError as exc:
            return str(exc)
        except OSError as exc:
            return f"Cannot edit {path}: {exc.strerror or exc}"

    def _unmatched(self, path: Path, text: str, old: str, new: str, replace_all: bool) -> str | None:
        if old == "":
            return f"old_string is empty but {path} is not; give the text to replace, or use Write" if text else None
        count = find_target(text, old, new)[2]
        if count == 0:
            return (f"old_string was not found in {path}. It must match the file exactly, including whitespace and "
                    "indentation; Read the file again to copy the current text.")  # fmt: skip
        if count > 1 and not replace_all:
            return (f"old_string occurs {count} times in {path}. Add surrounding lines to make it unique, or set "
                    "replace_all to true to replace every occurrence.")  # fmt: skip
        return None

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if (problem := self.check(args, ctx)) is not None:  # again: the file may have changed since
            return ToolResult.error(problem)
        path, old, new = path_arg(args, ctx), str_arg(args, "old_string"), str_arg(args, "new_string")
        replace_all = flag_arg(args, "replace_all", False)
        if not path.exists():  # old_string is empty: a new file
            return WriteTool().run({"file_path": str(path), "content": new}, ctx)
        try:
            return self._edit(path, old, new, replace_all, ctx)
        except ValueError as exc:
            return ToolResult.error(str(exc))
        except OSError as exc:
            return ToolResult.error(f"Cannot edit {path}: {exc.strerror or exc}")

    def _edit(self, path: Path, old: str, new: str, replace_all: bool, ctx: ToolContext) -> ToolResult:
        problem = stale_reason(ctx, path, "editing")  # after the permission, as claude's: never Read, or changed
        if problem:
            return ToolResult.error(problem)
        text, bom = load_text(path)
        old, new, count = find_target(text, old, new) if old else ("", new, 1)
        start = text.find(old)
        updated = text.replace(old, new, -1 if replace_all else 1) if old else new
        changing(ctx, path)
        path.write_bytes((codecs.BOM_UTF8 if bom else b"") + updated.encode("utf-8"))
        remember(ctx, path)
        times = "1 occurrence" if count == 1 else f"{count} occurrences"
        return ToolResult(
            f"Edited {path}: replaced {times}. The changed region now reads:\n{snippet(updated, start, len(new))}",
            data={"file_path": str(path), "replacements": count},
        )
