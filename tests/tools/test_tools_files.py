"""Read, Write, Edit, Glob and Grep on real files: numbering, read-before-write, unique edits, ordering, modes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentteams.store.file.store import FileStore
from agentteams.store.paths import Layout
from agentteams.tools.base import ToolContext, ToolInputError
from agentteams.tools.files.read_write_edit import MAX_LINE_CHARS, EditTool, ReadTool, WriteTool
from agentteams.tools.files.search import MAX_GLOB_RESULTS, GlobTool, GrepTool, glob_to_regex


@pytest.fixture
def ctx(tmp_path: Path, layout: Layout) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work, store=FileStore(layout), session_id="test-session")


def put(path: Path, text: str | bytes, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8", newline="")
    else:
        path.write_bytes(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def read(ctx: ToolContext, path: Path, **extra: Any) -> str:
    result = ReadTool().run({"file_path": str(path), **extra}, ctx)
    assert not result.is_error, result.content
    return result.content


# --- Read ---------------------------------------------------------------------------------------------


def test_read_numbers_lines_like_cat_n_and_records_the_mtime(ctx: ToolContext) -> None:
    f = put(ctx.cwd / "a.txt", "alpha\r\nbeta\n\ngamma")
    assert read(ctx, f) == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"
    assert ctx.read_files[f] == f.stat().st_mtime


def test_read_offset_and_limit(ctx: ToolContext) -> None:
    f = put(ctx.cwd / "n.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    text = read(ctx, f, offset=4, limit=2)
    assert text.startswith("     4\tline 4\n     5\tline 5\n")
    assert "Showing lines 4-5 of 10" in text
    assert "past the end" in read(ctx, f, offset=50)
    assert read(ctx, Path("n.txt"), limit=1).startswith("     1\tline 1\n")  # relative to ctx.cwd
    with pytest.raises(ToolInputError):
        ReadTool().run({"file_path": str(f), "limit": 0}, ctx)


def test_read_truncates_long_lines_and_defaults_to_2000_lines(ctx: ToolContext) -> None:
    f = put(ctx.cwd / "long.txt", "x" * (MAX_LINE_CHARS + 50) + "\n" + "y\n" * 2500)
    text = read(ctx, f)
    assert "[line truncated: 50 more characters]" in text
    assert "  2000\ty" in text and "  2001\t" not in text
    assert "Showing lines 1-2000 of 2501" in text


def test_read_refuses_binaries_directories_and_missing_files(ctx: ToolContext) -> None:
    png = put(ctx.cwd / "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(2000))
    result = ReadTool().run({"file_path": str(png)}, ctx)
    assert result.is_error
    assert "binary file" in result.content and "PNG image" in result.content and "2.0 KB" in result.content
    assert png.resolve() not in ctx.read_files
    for target, words in ((ctx.cwd, "is a directory"), (ctx.cwd / "nope.txt", "does not exist")):
        result = ReadTool().run({"file_path": str(target)}, ctx)
        assert result.is_error and words in result.content
    assert "is empty" in read(ctx, put(ctx.cwd / "empty.txt", ""))


def test_file_tools_name_the_resolved_absolute_path(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "real", target_is_directory=True)
    for tool in (ReadTool(), WriteTool(), EditTool()):
        assert tool.permission_target({"file_path": str(link / "x.txt")}) == str(tmp_path / "real" / "x.txt")
    assert ReadTool().kind == "read" and WriteTool().kind == "edit" and EditTool().kind == "edit"
    assert set(ReadTool().input_schema["properties"]) == {"file_path", "offset", "limit"}
    assert set(WriteTool().input_schema["properties"]) == {"file_path", "content"}
    assert set(EditTool().input_schema["properties"]) == {"file_path", "old_string", "new_string", "replace_all"}


# --- Write --------------------------------------------------------------------------------------------


def test_write_creates_parents_but_an_existing_file_must_be_read_first(ctx: ToolContext) -> None:
    new = ctx.cwd / "deep" / "er" / "new.txt"
    result = WriteTool().run({"file_path": str(new), "content": "hello\n"}, ctx)
    assert not result.is_error and new.read_text() == "hello\n" and "Created" in result.content
    assert ctx.read_files[new] == new.stat().st_mtime

    old = put(ctx.cwd / "old.txt", "original\n")
    refused = WriteTool().run({"file_path": str(old), "content": "replaced\n"}, ctx)
    assert refused.is_error and "Read it first" in refused.content
    assert old.read_text() == "original\n"

    read(ctx, old)
    done = WriteTool().run({"file_path": str(old), "content": "replaced\n"}, ctx)
    assert not done.is_error and "Updated" in done.content and old.read_text() == "replaced\n"


def test_write_refuses_a_file_changed_since_it_was_read(ctx: ToolContext) -> None:
    f = put(ctx.cwd / "f.txt", "v1\n", mtime=1_000_000)
    read(ctx, f)
    put(f, "changed by someone else\n", mtime=2_000_000)
    result = WriteTool().run({"file_path": str(f), "content": "v2\n"}, ctx)
    assert result.is_error and "modified since it was last read" in result.content
    assert f.read_text() == "changed by someone else\n"


# --- Edit ---------------------------------------------------------------------------------------------


def edit(ctx: ToolContext, path: Path, old: str, new: str, **extra: Any) -> Any:
    return EditTool().run({"file_path": str(path), "old_string": old, "new_string": new, **extra}, ctx)


def test_edit_requires_a_read_and_a_unique_match(ctx: ToolContext) -> None:
    f = put(ctx.cwd / "code.py", "a = 1\nb = 2\na = 1\nc = 3\n")
    result = edit(ctx, f, "b = 2", "b = 20")
    assert result.is_error and "Read it first" in result.content
    read(ctx, f)
    twice = edit(ctx, f, "a = 1", "a = 10")
    assert twice.is_error and "occurs 2 times" in twice.content and "replace_all" in twice.content
    missing = edit(ctx, f, "d = 4", "d = 40")
    assert missing.is_error and "not found" in missing.content
    same = edit(ctx, f, "b = 2", "b = 2")
    assert same.is_error and "exactly the same" in same.content
    assert f.read_text() == "a = 1\nb = 2\na = 1\nc = 3\n"

    done = edit(ctx, f, "b = 2\na = 1", "b = 2\na = 11")
    assert not done.is_error, done.content
    assert f.read_text() == "a = 1\nb = 2\na = 11\nc = 3\n"
    assert "     3\ta = 11" in done.content and "replaced 1 occurrence" in done.content
    assert ctx.read_files[f] == f.stat().st_mtime  # a second edit needs no new Read
    assert not edit(ctx, f, "c = 3", "c = 30").is_error


def test_edit_replace_all(ctx: ToolContext) -> None:
    f = put(ctx.cwd / "r.txt", "foo bar foo\nfoo\n")
    read(ctx, f)
    result = edit(ctx, f, "foo", "baz", replace_all=True)
    assert not result.is_error and "replaced 3 occurrences" in result.content
    assert f.read_text() == "baz bar baz\nbaz\n"


def test_edit_keeps_crlf_line_endings_and_the_bom(ctx: ToolContext) -> None:
    f = put(ctx.cwd / "win.txt", b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    read(ctx, f)
    result = edit(ctx, f, "one\ntwo", "one\n2a\n2b")
    assert not result.is_error, result.content
    assert f.read_bytes() == b"\xef\xbb\xbfone\r\n2a\r\n2b\r\nthree\r\n"


def test_edit_with_an_empty_old_string_creates_a_new_file(ctx: ToolContext) -> None:
    f = ctx.cwd / "made" / "new.txt"
    assert not edit(ctx, f, "", "fresh\n").is_error
    assert f.read_text() == "fresh\n"
    refused = edit(ctx, f, "", "again\n")
    assert refused.is_error and "old_string is empty" in refused.content


# --- Glob ---------------------------------------------------------------------------------------------


def test_glob_recurses_with_double_star_newest_first_and_skips_git(ctx: ToolContext) -> None:
    root = ctx.cwd
    put(root / "old.py", "", mtime=1_000)
    put(root / "pkg" / "mid.py", "", mtime=2_000)
    put(root / "pkg" / "sub" / "new.py", "", mtime=3_000)
    put(root / "pkg" / "notes.md", "", mtime=4_000)
    put(root / ".git" / "hook.py", "", mtime=5_000)
    found = GlobTool().run({"pattern": "**/*.py"}, ctx).content.splitlines()
    assert found == [str(root / "pkg" / "sub" / "new.py"), str(root / "pkg" / "mid.py"), str(root / "old.py")]
    assert GlobTool().run({"pattern": "*.py"}, ctx).content == str(root / "old.py")
    assert GlobTool().run({"pattern": "*.py", "path": "pkg"}, ctx).content == str(root / "pkg" / "mid.py")
    both = GlobTool().run({"pattern": "pkg/*.{py,md}"}, ctx).content.splitlines()
    assert both == [str(root / "pkg" / "notes.md"), str(root / "pkg" / "mid.py")]
    absolute = GlobTool().run({"pattern": f"{root}/pkg/**/*.py"}, ctx).content.splitlines()
    assert absolute == [str(root / "pkg" / "sub" / "new.py"), str(root / "pkg" / "mid.py")]
    assert GlobTool().run({"pattern": "*.rs"}, ctx).content == "No files found"
    assert GlobTool().run({"pattern": "*", "path": "nowhere"}, ctx).is_error


def test_glob_caps_the_result_list(ctx: ToolContext) -> None:
    for i in range(MAX_GLOB_RESULTS + 5):
        put(ctx.cwd / f"f{i:03}.txt", "", mtime=10_000 + i)
    lines = GlobTool().run({"pattern": "*.txt"}, ctx).content.splitlines()
    assert lines[0] == str(ctx.cwd / f"f{MAX_GLOB_RESULTS + 4:03}.txt")
    assert len(lines) == MAX_GLOB_RESULTS + 1
    assert f"Showing the {MAX_GLOB_RESULTS} newest of {MAX_GLOB_RESULTS + 5} files" in lines[-1]


def test_glob_translation() -> None:
    assert glob_to_regex("**/*.py") == r"(?:.*/)?[^/]*\.py"
    assert glob_to_regex("a/**") == "a/.*"
    assert glob_to_regex("[!x]?.{c,h}") == r"[^x][^/]\.(?:c|h)"


# --- Grep ---------------------------------------------------------------------------------------------


@pytest.fixture
def tree(ctx: ToolContext) -> Path:
    root = ctx.cwd
    put(root / "a.txt", "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\nalpha again\n", mtime=1_000)
    put(root / "sub" / "b.py", "one\nAlpha\n", mtime=2_000)
    put(root / ".hidden", "alpha\n", mtime=3_000)
    put(root / ".git" / "config", "alpha\n", mtime=4_000)
    put(root / "blob.bin", b"alpha\x00alpha\n", mtime=5_000)
    return root


def fallback(ctx: ToolContext, **args: Any) -> str:
    result = GrepTool(use_ripgrep=False).run(args, ctx)
    assert not result.is_error, result.content
    return result.content


def test_grep_files_mode_lists_newest_first_skipping_git_and_binaries(ctx: ToolContext, tree: Path) -> None:
    assert fallback(ctx, pattern="alpha") == f"Found 2 files\n{tree / '.hidden'}\n{tree / 'a.txt'}"
    assert fallback(ctx, pattern="alpha", **{"-i": True}).splitlines()[0] == "Found 3 files"
    assert fallback(ctx, pattern="nothing-matches-this") == "No files found"


def test_grep_content_mode_with_line_numbers_and_context(ctx: ToolContext, tree: Path) -> None:
    a, h = tree / "a.txt", tree / ".hidden"
    assert fallback(ctx, pattern="^alpha", output_mode="content") == f"{h}:1:alpha\n{a}:1:alpha\n{a}:9:alpha again"
    with_context = fallback(ctx, pattern="alpha", output_mode="content", path="a.txt", **{"-C": 1})
    assert with_context == f"{a}:1:alpha\n{a}-2-beta\n--\n{a}-8-theta\n{a}:9:alpha again"
    before = fallback(ctx, pattern="eps", output_mode="content", path=str(a), **{"-B": 1, "-n": False})
    assert before == f"{a}-delta\n{a}:epsilon"


def test_grep_count_mode_case_and_glob_filters(ctx: ToolContext, tree: Path) -> None:
    counted = fallback(ctx, pattern="ALPHA", output_mode="count", **{"-i": True})
    assert counted.splitlines()[:3] == [f"{tree / '.hidden'}:1", f"{tree / 'a.txt'}:2", f"{tree / 'sub' / 'b.py'}:1"]
    assert counted.endswith("Found 4 matching lines in 3 files")
    assert fallback(ctx, pattern="alpha", glob="*.py", **{"-i": True}) == f"Found 1 file\n{tree / 'sub' / 'b.py'}"
    assert fallback(ctx, pattern="alpha", glob="sub/*.py", **{"-i": True}).endswith("b.py")
    assert "b.py" not in fallback(ctx, pattern="alpha", glob="!*.py", **{"-i": True})
    assert fallback(ctx, pattern="alpha", type="py", **{"-i": True}).endswith("b.py")


def test_grep_head_limit_and_multiline(ctx: ToolContext, tree: Path) -> None:
    limited = fallback(ctx, pattern="a", output_mode="content", head_limit=2)
    assert limited.splitlines()[:2] == [f"{tree / '.hidden'}:1:alpha", f"{tree / 'a.txt'}:1:alpha"]
    assert "Showing the first 2 of" in limited
    spanning = fallback(ctx, pattern=r"beta\ngam", output_mode="content", multiline=True)
    assert spanning == f"{tree / 'a.txt'}:2:beta\n{tree / 'a.txt'}:3:gamma"
    assert fallback(ctx, pattern=r"beta\ngam", output_mode="content") == "No matches found"


def test_grep_reports_bad_input_as_errors(ctx: ToolContext, tree: Path) -> None:
    assert GrepTool(use_ripgrep=False).run({"pattern": "("}, ctx).is_error
    assert GrepTool(use_ripgrep=False).run({"pattern": "x", "type": "nosuch"}, ctx).is_error
    assert GrepTool().run({"pattern": "x", "path": "missing"}, ctx).is_error
    with pytest.raises(ToolInputError):
        GrepTool().run({"pattern": "x", "output_mode": "lines"}, ctx)
    expected = {"pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C", "head_limit"}
    assert set(GrepTool().input_schema["properties"]) == expected | {"multiline"}


PARITY_CASES: list[dict[str, Any]] = [
    {"pattern": "alpha"},
    {"pattern": "alpha", "-i": True, "output_mode": "count"},
    {"pattern": "alpha", "output_mode": "content", "-C": 1},
    {"pattern": "alpha|eta", "output_mode": "content", "-A": 1, "-B": 3, "path": "a.txt"},
    {"pattern": "a", "output_mode": "content", "-n": False, "head_limit": 5},
    {"pattern": "alpha", "-i": True, "glob": "sub/*.py"},
    {"pattern": "alpha", "-i": True, "glob": "!*.py", "output_mode": "content"},
    {"pattern": "alpha", "-i": True, "type": "py"},
    {"pattern": r"beta.gamma", "output_mode": "content", "multiline": True},
    {"pattern": r"ta\n", "output_mode": "count", "multiline": True},
]


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep (rg) is not on PATH; the fallback tests cover Grep")
@pytest.mark.parametrize("args", PARITY_CASES, ids=str)
def test_grep_fallback_matches_ripgrep(ctx: ToolContext, tree: Path, args: dict[str, Any]) -> None:
    with_rg = GrepTool(use_ripgrep=True).run(dict(args), ctx)
    assert not with_rg.is_error, with_rg.content
    assert fallback(ctx, **args) == with_rg.content


def test_file_tools_resolve_relative_targets_against_the_agent_cwd(tmp_path: Path) -> None:
    from agentteams.tools.files.read_write_edit import EditTool, ReadTool, WriteTool

    for tool in (ReadTool(), WriteTool(), EditTool()):
        assert tool.permission_target({"file_path": "sub/x.txt"}, tmp_path) == str(
            (tmp_path / "sub" / "x.txt").resolve()
        )
