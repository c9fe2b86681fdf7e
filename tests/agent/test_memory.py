"""Memory files as Claude Code reads them (order observed from 2.1.330): lookup order, `@path` imports (relative,
`~`, depth, cycles, code ignored, outside-the-cwd withheld), size caps, and where the text reaches the model."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentteams import diagnostics
from agentteams.agent import memory as mem
from agentteams.agent.memory import describe, import_targets, load_memory
from agentteams.agent.prompts import Identity
from agentteams.agent.session import Session, SessionOptions
from agentteams.model.anthropic_client import build_params
from agentteams.store.paths import Layout
from tests.support.fake_model import FakeModel, text, tool


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    seen: list[str] = []
    diagnostics.set_sink(lambda _level, message: seen.append(message))
    yield seen
    diagnostics.set_sink(None)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """(config root, cwd): a user file, a file above the repository, the repository's three files, a subdir."""
    cfg = tmp_path / "cfg"
    write(cfg / "CLAUDE.md", "USER")
    outer = tmp_path / "outer"
    write(outer / "CLAUDE.md", "OUTER")
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "CLAUDE.md", "REPO @docs/imp.md")
    write(repo / "docs" / "imp.md", "IMPORTED")
    write(repo / ".claude" / "CLAUDE.md", "DOTCLAUDE")
    write(repo / "CLAUDE.local.md", "LOCAL")
    write(repo / "sub" / "CLAUDE.md", "SUB")
    return cfg, repo


def texts(cwd: Path, cfg: Path) -> list[str]:
    return [f.text for f in load_memory(cwd, cfg).files]


def test_lookup_order_is_claude_codes(tree: tuple[Path, Path]) -> None:
    cfg, repo = tree
    # the user's file, then each directory outermost first (above the git root too, as 2.1.330 reads), each
    # directory's CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, an import right after its importer
    assert texts(repo, cfg) == ["USER", "OUTER", "REPO @docs/imp.md", "IMPORTED", "DOTCLAUDE", "LOCAL"]
    kinds = [f.kind for f in load_memory(repo, cfg).files]
    assert kinds == ["user", "project", "project", "project", "project", "local"]


def test_a_subdirectory_adds_its_own_files_last(tree: tuple[Path, Path]) -> None:
    cfg, repo = tree
    got = texts(repo / "sub", cfg)
    assert got[-1] == "SUB" and got.index("LOCAL") < got.index("SUB")


def test_imports_are_relative_to_the_importing_file(tmp_path: Path) -> None:
    write(tmp_path / "CLAUDE.md", "see @docs/a.md")
    write(tmp_path / "docs" / "a.md", "A then @b.md and @../top.md")
    write(tmp_path / "docs" / "b.md", "B")
    write(tmp_path / "top.md", "TOP")
    files = load_memory(tmp_path, tmp_path / "cfg").files
    assert [f.text for f in files] == ["see @docs/a.md", "A then @b.md and @../top.md", "B", "TOP"]
    assert files[2].imported_by == tmp_path / "docs" / "a.md"


def test_tilde_imports_from_the_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    write(home / "notes" / "mine.md", "MINE")
    cfg = tmp_path / "cfg"
    write(cfg / "CLAUDE.md", "USER @~/notes/mine.md")
    work = tmp_path / "work"
    write(work / "CLAUDE.md", "PROJECT @~/notes/mine.md")
    loaded = load_memory(work, cfg)
    assert [f.text for f in loaded.files] == ["USER @~/notes/mine.md", "MINE", "PROJECT @~/notes/mine.md"]


def test_a_project_import_from_outside_the_cwd_is_withheld(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 2.1.330 loads such an import only after its approval dialog: a checked-in file cannot pull in ~/.ssh
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    secret = write(tmp_path / "home" / ".ssh" / "id_ed25519", "PRIVATE KEY")
    work = tmp_path / "work"
    write(work / "CLAUDE.md", "@~/.ssh/id_ed25519 @/etc/hostname")
    loaded = load_memory(work, tmp_path / "cfg")
    assert [f.text for f in loaded.files] == ["@~/.ssh/id_ed25519 @/etc/hostname"]
    assert secret in loaded.withheld
    assert any("not loaded" in line and str(secret) in line for line in describe(loaded))


def test_a_project_import_through_a_symlink_out_of_the_cwd_is_withheld(tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere" / "secret.txt", "SECRET")
    work = tmp_path / "work"
    write(work / "CLAUDE.md", "@docs/link.md @docs/fine.md")
    write(work / "docs" / "fine.md", "FINE")
    (work / "docs" / "link.md").symlink_to(outside)
    loaded = load_memory(work, tmp_path / "cfg")
    assert [f.text for f in loaded.files] == ["@docs/link.md @docs/fine.md", "FINE"]
    assert loaded.withheld == (work / "docs" / "link.md",)


def test_imports_stop_after_four_hops(tmp_path: Path) -> None:
    write(tmp_path / "CLAUDE.md", "ROOT @c1.md")
    for i in range(1, 8):
        write(tmp_path / f"c{i}.md", f"C{i} @c{i + 1}.md")
    got = texts(tmp_path, tmp_path / "cfg")
    assert got == ["ROOT @c1.md", "C1 @c2.md", "C2 @c3.md", "C3 @c4.md", "C4 @c5.md"]  # 2.1.330 stops there too


def test_cycles_are_read_once(tmp_path: Path) -> None:
    write(tmp_path / "CLAUDE.md", "ROOT @a.md @CLAUDE.md")
    write(tmp_path / "a.md", "A @b.md")
    write(tmp_path / "b.md", "B @a.md @CLAUDE.md")
    assert texts(tmp_path, tmp_path / "cfg") == ["ROOT @a.md @CLAUDE.md", "A @b.md", "B @a.md @CLAUDE.md"]


def test_no_import_inside_code_and_missing_ones_are_quiet(tmp_path: Path, warnings: list[str]) -> None:
    body = "a `@span.md` b ``x @span2.md`` c\n```sh\n@block.md\n```\n~~~\n@tilde.md\n~~~\n"
    body += "mail me@host.md @real.md @gone.md"
    write(tmp_path / "CLAUDE.md", body)
    for name in ("span.md", "span2.md", "block.md", "tilde.md", "host.md", "real.md"):
        write(tmp_path / name, name.upper())
    assert texts(tmp_path, tmp_path / "cfg") == [body, "REAL.MD"]
    assert warnings == []


def test_import_syntax() -> None:
    assert import_targets("@a.md, @./b.md\n@~/c.md @/abs/d.md @my\\ file.md") == [
        "a.md,", "./b.md", "~/c.md", "/abs/d.md", "my file.md"
    ]  # fmt: skip
    assert import_targets("x@y.md @ @/ @@z `@q.md`") == []


def test_a_huge_file_is_cut_and_the_total_is_capped(tmp_path: Path, warnings: list[str]) -> None:
    write(tmp_path / "CLAUDE.md", "@big.md @big2.md @big3.md @big4.md @big5.md")
    for name in ("big.md", "big2.md", "big3.md", "big4.md", "big5.md"):
        write(tmp_path / name, "x" * 300_000)
    files = load_memory(tmp_path, tmp_path / "cfg").files
    big = files[1]
    assert big.size == 300_000 and big.truncated and len(big.text) == mem.MAX_FILE_BYTES
    assert sum(len(f.text) for f in files) <= mem.MAX_TOTAL_BYTES
    assert len(files) < 6 and len(warnings) == 1 and "not read" in warnings[0]


def test_special_and_binary_files_are_not_read(tmp_path: Path, warnings: list[str]) -> None:
    os.mkfifo(tmp_path / "pipe.md")  # opening a FIFO for reading would block for ever
    write(tmp_path / "bin.md", "").write_bytes(b"\x7fELF\0\0binary")
    cfg = tmp_path / "cfg"
    write(cfg / "CLAUDE.md", "USER @/dev/zero @" + str(tmp_path / "pipe.md"))
    write(tmp_path / "CLAUDE.md", "@pipe.md @bin.md")
    started = time.monotonic()
    got = texts(tmp_path, cfg)
    assert time.monotonic() - started < 5
    assert got == ["USER @/dev/zero @" + str(tmp_path / "pipe.md"), "@pipe.md @bin.md"] and warnings == []


def test_an_unreadable_file_is_one_warning(tmp_path: Path, warnings: list[str]) -> None:
    (tmp_path / "CLAUDE.md").symlink_to("CLAUDE.md")  # a loop: stat fails with ELOOP, even for root
    write(tmp_path / "CLAUDE.local.md", "LOCAL")
    assert texts(tmp_path, tmp_path / "cfg") == ["LOCAL"]
    assert len(warnings) == 1 and "CLAUDE.md" in warnings[0] and "cannot read" in warnings[0]


def test_no_memory_no_block(tmp_path: Path) -> None:
    loaded = load_memory(tmp_path, tmp_path / "cfg")
    assert loaded.prompt_text() is None and "No memory files" in describe(loaded)[0]


def test_the_prompt_block_names_each_file_in_order(tree: tuple[Path, Path]) -> None:
    cfg, repo = tree
    block = load_memory(repo, cfg).prompt_text()
    assert block is not None
    marks = [str(cfg / "CLAUDE.md"), "USER", "OUTER", "REPO", str(repo / "docs" / "imp.md"), "IMPORTED", "DOTCLAUDE"]
    positions = [block.index(m) for m in marks]
    assert positions == sorted(positions)


# -- reaching the model ---------------------------------------------------------------------------------


def first_user_blocks(model: FakeModel, n: int) -> list[dict[str, object]]:
    params = build_params(model.requests[n])
    blocks: list[dict[str, object]] = params["messages"][0]["content"]
    return blocks


def test_memory_leads_the_first_user_message_of_every_request(tree: tuple[Path, Path], tmp_path: Path) -> None:
    cfg, repo = tree
    model = FakeModel([[tool("Bash", command="true")], [text("done")], [text("again")]])
    session = Session(SessionOptions(cwd=repo, permission_mode="bypassPermissions"), model, layout=Layout(cfg))
    session.run("PROMPT-ONE")
    session.run("PROMPT-TWO")
    assert "USER" in str(session.context) and "OUTER" not in model.requests[0].system  # not in the system prompt
    first = [first_user_blocks(model, n) for n in range(3)]
    assert first[0][0]["text"] == session.context and first[0][1]["text"] == "PROMPT-ONE"
    # the same first message in every request: the cached prefix holds (the breakpoint moves on, the text not)
    assert [[b["text"] for b in f] for f in first] == [[session.context, "PROMPT-ONE"]] * 3
    assert session.agent.messages[0]["content"] == "PROMPT-ONE"  # stored (and transcribed) without it


def test_a_subagent_gets_the_same_memory(tree: tuple[Path, Path]) -> None:
    cfg, repo = tree
    model = FakeModel([
        [tool("Task", description="look", prompt="SUB-PROMPT", subagent_type="Explore")],
        [text("sub report")],
        [text("done")],
    ])  # fmt: skip
    session = Session(SessionOptions(cwd=repo, permission_mode="bypassPermissions"), model, layout=Layout(cfg))
    session.run("go")
    sub = first_user_blocks(model, 1)
    assert [b["text"] for b in sub] == [session.context, "SUB-PROMPT"]


def test_a_teammate_reads_the_memory_of_its_own_cwd(tree: tuple[Path, Path]) -> None:
    cfg, repo = tree
    model = FakeModel([[text("hi")]])
    options = SessionOptions(cwd=repo / "sub", team_role="teammate", identity=Identity("alice", "proj"))
    mate = Session(options, model, layout=Layout(cfg))
    mate.run("START")
    block = str(first_user_blocks(model, 0)[0]["text"])
    assert "SUB" in block and "USER" in block and block.index("LOCAL") < block.index("SUB")
