"""Glob and Grep: find files by name pattern, and lines by regex (ripgrep when on PATH, else pure Python).
Both skip `.git`; Grep also skips binary files, and searches hidden and git-ignored files alike."""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from agentteams.tools.base import Tool, ToolContext, ToolInputError, ToolResult, require_str
from agentteams.tools.files.read_write_edit import flag_arg, int_arg, is_binary, opt_str_arg, resolve_path

MAX_GLOB_RESULTS = 100
MAX_GREP_LINE = 500
MAX_OUTPUT_CHARS = 30_000
RG_TIMEOUT_S = 120
Found = tuple[os.DirEntry[str], str]  # a file met by `walk`, and its path relative to the root
MODES = ("content", "files_with_matches", "count")
_TYPES = (
    "py:py,pyi js:js,jsx,mjs,cjs,vue ts:ts,tsx,mts,cts rust:rs go:go java:java c:c,h cpp:cpp,cc,cxx,hpp,hh,hxx,h "
    "md:md,markdown,mdx json:json yaml:yaml,yml toml:toml sh:sh,bash,zsh html:html,htm css:css,scss,sass,less "
    "rb:rb php:php txt:txt"
)
TYPE_GLOBS = {k: tuple(f"*.{e}" for e in v.split(",")) for k, v in (t.split(":") for t in _TYPES.split())}


def _braces(pattern: str, start: int) -> tuple[int, list[str]]:
    """The index of the `}` closing the `{` at `start` (-1 if none), and the top-level alternatives inside."""
    parts: list[str] = []
    depth, last = 0, start + 1
    for i in range(start, len(pattern)):
        depth += {"{": 1, "}": -1}.get(pattern[i], 0)
        if depth == 0:
            return i, [*parts, pattern[last:i]]
        if pattern[i] == "," and depth == 1:
            parts.append(pattern[last:i])
            last = i + 1
    return -1, []


def glob_to_regex(pattern: str) -> str:
    """A glob as a regex over `/`-separated paths: `**` spans directories, `*` and `?` do not, `{a,b}` and `[..]`."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        end, alternatives = _braces(pattern, i) if c == "{" else (pattern.find("]", i + 2) if c == "[" else -1, [])
        if pattern.startswith("**", i):
            slash = pattern.startswith("**/", i)
            out.append("(?:.*/)?" if slash else ".*")
            i += 3 if slash else 2
            continue
        if c == "{" and end > 0:
            out.append("(?:" + "|".join(glob_to_regex(a) for a in alternatives) + ")")
        elif c == "[" and end > 0:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
        else:
            out.append({"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c)))
            end = i
        i = end + 1
    return "".join(out)


def walk(root: Path, max_depth: int | None = None, prune: Callable[[str], bool] | None = None) -> Iterator[Found]:
    """Each non-directory under `root` as (entry, relative path), depth-first in name order; skips `.git`,
    follows no symlinked directory, descends at most `max_depth` levels, and none that `prune` names."""

    def visit(directory: str, prefix: str, depth: int) -> Iterator[Found]:
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            rel = prefix + entry.name
            if entry.name == ".git":
                continue
            if not entry.is_dir(follow_symlinks=False):
                yield entry, rel
            elif (max_depth is None or depth < max_depth) and not (prune and prune(rel)):
                yield from visit(entry.path, rel + "/", depth + 1)

    yield from visit(str(root), "", 0)


def _mtime(path: str) -> float:
    with contextlib.suppress(OSError):
        return os.stat(path).st_mtime
    return 0.0


def newest_first(paths: list[str]) -> list[str]:
    return sorted(paths, key=lambda p: (-_mtime(p), p))


def split_absolute(pattern: str) -> tuple[Path, str]:
    """An absolute glob as (the directory before its first wildcard, the rest)."""
    parts = Path(pattern).parts
    first = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[{")), len(parts) - 1)
    return Path(*parts[:first]), "/".join(parts[first:])


def base_dir(args: dict[str, Any], ctx: ToolContext) -> Path:
    raw = opt_str_arg(args, "path")
    return (ctx.resolve(raw) if raw else ctx.cwd).resolve()


def _path_target(args: dict[str, Any], cwd: Path | None) -> str | None:
    raw = args.get("path")
    return str(resolve_path(raw, cwd)) if isinstance(raw, str) and raw else None


class GlobTool(Tool):
    name = "Glob"
    description = (
        "Find files whose path, relative to `path` (default: the working directory), matches a glob such as "
        f"`**/*.py` or `src/**/*.{{ts,tsx}}` (`**` spans directories). Returns absolute paths, newest first, "
        f"at most {MAX_GLOB_RESULTS}. Skips .git."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The glob pattern to match file paths against"},
            "path": {"type": "string", "description": "Directory to search in (default: the working directory)"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    kind = "read"

    def permission_target(self, args: dict[str, Any], cwd: Path | None = None) -> str | None:
        return _path_target(args, cwd)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = require_str(args, "pattern")
        base = base_dir(args, ctx)
        if Path(pattern).is_absolute():
            base, pattern = split_absolute(pattern)
        pattern = pattern.removeprefix("./")
        if not base.is_dir():
            return ToolResult.error(f"Directory does not exist: {base}")
        rx = re.compile(glob_to_regex(pattern))
        depth = None if "**" in pattern else pattern.count("/")
        found = newest_first([e.path for e, rel in walk(base, depth) if rx.fullmatch(rel) and e.is_file()])
        if not found:
            return ToolResult("No files found", data={"count": 0})
        text = "\n".join(found[:MAX_GLOB_RESULTS])
        if len(found) > MAX_GLOB_RESULTS:
            text += f"\n(Showing the {MAX_GLOB_RESULTS} newest of {len(found)} files; narrow the pattern or path.)"
        return ToolResult(text, data={"count": len(found)})


@dataclass
class GrepQuery:
    pattern: str
    root: Path
    mode: str = "files_with_matches"
    glob: str | None = None
    type: str | None = None
    ignore_case: bool = False
    line_numbers: bool = True
    before: int = 0
    after: int = 0
    head_limit: int | None = None
    multiline: bool = False


def parse_query(args: dict[str, Any], ctx: ToolContext) -> GrepQuery:
    mode = args.get("output_mode") or "files_with_matches"
    if mode not in MODES:
        raise ToolInputError(f"`output_mode` must be one of {', '.join(MODES)}")
    around = int_arg(args, "-C", 0, minimum=0)
    return GrepQuery(
        pattern=require_str(args, "pattern"),
        root=base_dir(args, ctx),
        mode=mode,
        glob=opt_str_arg(args, "glob"),
        type=opt_str_arg(args, "type"),
        ignore_case=flag_arg(args, "-i", False),
        line_numbers=flag_arg(args, "-n", True),
        before=int_arg(args, "-B", around, minimum=0),
        after=int_arg(args, "-A", around, minimum=0),
        head_limit=int_arg(args, "head_limit", 0, minimum=0) or None,
        multiline=flag_arg(args, "multiline", False),
    )


def rg_command(rg: str, q: GrepQuery) -> list[str]:
    cmd = [rg, "--no-config", "--hidden", "--no-ignore", "--glob", "!.git", "--color", "never", "--no-messages"]
    if q.mode == "files_with_matches":
        cmd.append("--files-with-matches")
    elif q.mode == "count":
        cmd += ["--count", "--with-filename", "--sort", "path"]
    else:
        cmd += ["--with-filename", "--no-heading", "--sort", "path", "-A", str(q.after), "-B", str(q.before)]
        cmd.append("--line-number" if q.line_numbers else "--no-line-number")
    cmd += (["--ignore-case"] if q.ignore_case else []) + (["--multiline", "--multiline-dotall"] * q.multiline)
    cmd += (["--glob", q.glob] if q.glob else []) + (["--type", q.type] if q.type else [])
    return [*cmd, "--regexp", q.pattern, "--", str(q.root)]


def run_rg(rg: str, q: GrepQuery) -> list[str]:
    """ripgrep's output lines; ValueError with its message when it fails."""
    import subprocess  # loaded by a search, not by every session that offers the tool

    try:
        cwd = q.root if q.root.is_dir() else q.root.parent  # rg matches a `--glob` with a `/` from its cwd
        done = subprocess.run(
            rg_command(rg, q), cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=RG_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ValueError(f"the search took longer than {RG_TIMEOUT_S} s; narrow the path or glob") from exc
    out = done.stdout.decode("utf-8", errors="replace")
    if done.returncode not in (0, 1) and not out:
        raise ValueError(done.stderr.decode("utf-8", errors="replace").strip() or f"rg failed ({done.returncode})")
    return out.split("\n")[:-1] if out else []


def _file_glob(glob: str) -> re.Pattern[str]:
    """ripgrep's reading of a `--glob`: with a `/` it is anchored at the root, else it matches a name at any depth."""
    body = glob.lstrip("/")
    return re.compile(glob_to_regex(body if "/" in glob else "**/" + body))


def file_filter(q: GrepQuery) -> tuple[Callable[[str], bool], Callable[[str], bool]]:
    """(whether a file's relative path is searched, whether a directory is pruned), as `--glob`/`--type` would."""
    groups = [[_file_glob(g) for g in TYPE_GLOBS[q.type]]] if q.type else []
    exclude = [_file_glob(q.glob[1:])] if q.glob and q.glob.startswith("!") else []
    if q.glob and not exclude:
        groups.append([_file_glob(q.glob)])

    def excluded(rel: str) -> bool:
        return any(r.fullmatch(rel) for r in exclude)

    def wanted(rel: str) -> bool:
        return all(any(r.fullmatch(rel) for r in group) for group in groups) and not excluded(rel)

    return wanted, excluded


def match_lines(rx: re.Pattern[str], text: str, multiline: bool) -> tuple[list[str], list[int], int]:
    """The file's lines, the indices of the lines that match, and ripgrep's count for the file."""
    lines = text.split("\n") if text else []
    if text.endswith("\n"):
        lines.pop()
    if not multiline:
        hits = [i for i, line in enumerate(lines) if rx.search(line)]
        return lines, hits, len(hits)
    starts = [0, *itertools.accumulate(len(line) + 1 for line in lines[:-1])]
    matched: set[int] = set()
    single: set[int] = set()
    spans = 0
    for m in rx.finditer(text):
        if m.start() >= len(text) and (not text or text.endswith("\n")):
            continue
        first = bisect.bisect_right(starts, m.start()) - 1
        last = bisect.bisect_right(starts, max(m.start(), m.end() - 1)) - 1
        matched.update(range(first, last + 1))
        if first == last:
            single.add(first)
        spans += first != last
    return lines, sorted(matched), len(single) + spans


def render_content(name: str, lines: list[str], hits: list[int], q: GrepQuery) -> list[str]:
    """ripgrep's `path:N:line` / `path-N-context` lines, with `--` between non-adjacent groups."""
    hit_set = set(hits)
    shown = sorted({j for i in hits for j in range(i - q.before, i + q.after + 1) if 0 <= j < len(lines)})
    out: list[str] = []
    for k, i in enumerate(shown):
        if k and i != shown[k - 1] + 1 and (q.before or q.after):
            out.append("--")
        sep = ":" if i in hit_set else "-"
        out.append(f"{name}{sep}{i + 1}{sep}{lines[i]}" if q.line_numbers else f"{name}{sep}{lines[i]}")
    return out


def _candidates(q: GrepQuery) -> Iterator[str]:
    if q.root.is_file():
        yield str(q.root)
        return
    wanted, prune = file_filter(q)
    for entry, rel in walk(q.root, prune=prune):
        if entry.is_file(follow_symlinks=False) and wanted(rel):
            yield entry.path


def python_grep(q: GrepQuery) -> list[str]:
    """The same output lines as `run_rg`, computed in Python; ValueError for a bad pattern or type."""
    if q.type and q.type not in TYPE_GLOBS:
        raise ValueError(f"unknown file type {q.type!r}; known here: {', '.join(sorted(TYPE_GLOBS))}")
    flags = (re.IGNORECASE if q.ignore_case else 0) | (re.MULTILINE | re.DOTALL if q.multiline else 0)
    try:
        rx = re.compile(q.pattern, flags)
    except re.error as exc:
        raise ValueError(f"invalid regex {q.pattern!r}: {exc}") from exc
    out: list[str] = []
    for name in _candidates(q):
        data = b"\0"
        with contextlib.suppress(OSError):
            data = Path(name).read_bytes()
        if b"\0" in data:  # binary, or unreadable
            continue
        lines, hits, count = match_lines(rx, data.decode("utf-8", errors="replace").removeprefix("\ufeff"), q.multiline)
        if not hits:
            continue
        if q.mode == "files_with_matches":
            out.append(name)
        elif q.mode == "count":
            out.append(f"{name}:{count}")
        else:
            out += ["--"] if out and (q.before or q.after) else []
            out += render_content(name, lines, hits, q)
    return out


def _cap_line(line: str) -> str:
    line = line.removesuffix("\r")
    extra = len(line) - MAX_GREP_LINE
    return f"{line[:MAX_GREP_LINE]} [... {extra} more characters]" if extra > 0 else line


def format_result(q: GrepQuery, lines: list[str]) -> ToolResult:
    """Sort (files by mtime, newest first), apply head_limit, cap long lines, and add the summary."""
    if q.mode == "files_with_matches":
        lines = newest_first(lines)
    total = len(lines)
    if not lines:
        return ToolResult("No files found" if q.mode == "files_with_matches" else "No matches found", data={"count": 0})
    lines = [_cap_line(line) for line in lines[: q.head_limit]]
    body = "\n".join(lines)
    if len(body) > MAX_OUTPUT_CHARS:
        body = body[:MAX_OUTPUT_CHARS] + "\n[... output cut; use head_limit, a narrower path or a glob ...]"
    cut = len(lines) < total
    if q.mode == "files_with_matches":
        note = f" (showing the first {len(lines)})" if cut else ""
        return ToolResult(f"Found {total} file{'s' * (total != 1)}{note}\n{body}", data={"count": total})
    if q.mode == "count":
        hits = sum(int(line.rsplit(":", 1)[1]) for line in lines)
        body += f"\n\nFound {hits} matching line{'s' * (hits != 1)} in {len(lines)} file{'s' * (len(lines) != 1)}"
    if cut:
        body += f"\n\n(Showing the first {len(lines)} of {total} lines; raise head_limit to see more.)"
    return ToolResult(body, data={"count": total})


class GrepTool(Tool):
    name = "Grep"
    description = (
        "Search file contents with a regular expression (ripgrep syntax), recursively under `path` "
        "(default: the working directory), skipping .git and binary files. output_mode: files_with_matches "
        "(default; paths, newest first), content (matching lines, with -n line numbers and -A/-B/-C context), "
        "or count (matching lines per file). Filter files with glob (e.g. `*.{ts,tsx}`) or type (e.g. `py`)."
    )
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for"},
            "path": {"type": "string", "description": "File or directory to search (default: working directory)"},
            "glob": {"type": "string", "description": "Only search files matching this glob, e.g. `*.py`"},
            "type": {"type": "string", "description": "Only search files of this type, e.g. py, js, rust"},
            "output_mode": {"type": "string", "enum": list(MODES), "description": "What to return"},
            "-i": {"type": "boolean", "description": "Case-insensitive search"},
            "-n": {"type": "boolean", "description": "Show line numbers (content mode; default true)"},
            "-A": {"type": "integer", "description": "Lines of context after each match (content mode)"},
            "-B": {"type": "integer", "description": "Lines of context before each match (content mode)"},
            "-C": {"type": "integer", "description": "Lines of context around each match (content mode)"},
            "head_limit": {"type": "integer", "description": "Return only the first N lines or entries"},
            "multiline": {"type": "boolean", "description": "Let the pattern span lines; `.` matches newlines"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    kind = "read"

    def __init__(self, use_ripgrep: bool = True) -> None:  # False forces the pure-Python search
        self.use_ripgrep = use_ripgrep

    permission_target = GlobTool.permission_target  # the searched path

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        q = parse_query(args, ctx)
        if not q.root.exists():
            return ToolResult.error(f"Path does not exist: {q.root}")
        import shutil

        rg = shutil.which("rg") if self.use_ripgrep else None
        try:
            if q.root.is_file() and is_binary(q.root):
                return ToolResult(f"No matches: {q.root} is a binary file; Grep searches text", data={"count": 0})
            lines = run_rg(rg, q) if rg else python_grep(q)
        except (OSError, ValueError) as exc:
            return ToolResult.error(f"Grep failed: {exc}")
        return format_result(q, lines)
