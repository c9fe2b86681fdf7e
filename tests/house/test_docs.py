"""The docs hold: every relative link in README.md and docs/*.md reaches a file (and a heading of it), every
`agentteams …` command line a fenced code block shows names a real command with real options (resolved against the
CLI's click command tree, as `agentteams.cli.main` resolves it), and README.md stays a page naming both set-up
commands. The checks are plain functions, each shown to catch a planted mistake."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from agentteams.cli import COMMANDS, GROUPS, _target, click_command
from tests.support.repo import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
README_MAX_LINES = 200
INSTALL = "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[dev]' && agentteams demo --attach"
TESTS = "python -m pytest -q -n 4 --dist worksteal"
GLOBAL_OPTIONS = ("--store",)  # given before the command's name (the CLI's store option): one value each
SHELL_OPERATORS = ("|", "||", "&&", ";", "&")
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+).*?\1")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
WORD = re.compile(r"""(?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"'])+""")


# --- markdown structure ----------------------------------------------------------------------------------------------


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, code spans blanked (a link or heading there is only text)."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(CODE_SPAN.sub("", line))
    return out


def code_blocks(text: str) -> list[list[str]]:
    """The lines of each fenced code block."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if FENCE.match(line):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: markup dropped, lower case, punctuation removed, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").replace("*", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a page, a repeated one numbered as GitHub numbers it (`x`, `x-1`, ...)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(text: str, page: Path) -> list[str]:
    """The relative links of one page (its text given) that do not reach a file, or a heading of it."""
    problems: list[str] = []
    for line in prose_lines(text):
        for target in LINK.findall(line):
            if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target):  # https:, mailto: ...: not ours to check
                continue
            path_part, _, anchor = target.partition("#")
            dest = (page.parent / path_part).resolve() if path_part else page
            if not dest.exists():
                problems.append(f"{page.name}: {target}: no file {dest}")
            elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest.read_text(encoding="utf-8"))):
                problems.append(f"{page.name}: {target}: no heading #{anchor} in {dest.name}")
    return problems


# --- command lines ---------------------------------------------------------------------------------------------------


def command_lines(text: str) -> list[str]:
    """The lines of fenced code blocks, a trailing backslash joining a line to the next."""
    lines: list[str] = []
    for block in code_blocks(text):
        pending = ""
        for line in block:
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            lines.append(pending + line)
            pending = ""
        if pending:
            lines.append(pending)
    return lines


def _unquote(word: str) -> str:
    try:
        parts = shlex.split(word)
    except ValueError:
        return word
    return parts[0] if parts else ""


def invocations(line: str) -> list[list[tuple[str, bool]]]:
    """Each `agentteams …` command of a shell line, as (word, was quoted) pairs after the program's name: a `$ `
    prompt, env assignments before it and commands piped into it or chained before it are left out; the command
    ends at a pipe, `&&`, `;`, a redirection or a comment."""
    text = line.strip().removeprefix("$ ")
    found: list[list[tuple[str, bool]]] = []
    segment: list[str] = []
    for raw in [*WORD.findall(text), ";"]:
        if raw.startswith("#") or raw in SHELL_OPERATORS or re.match(r"^\d*[<>]", raw):
            while segment and ENV_ASSIGNMENT.match(segment[0]):
                segment.pop(0)
            if segment and _unquote(segment[0]) == "agentteams":
                found.append([(_unquote(w), w[:1] in "\"'") for w in segment[1:]])
            segment = []
            if raw.startswith("#"):
                break
            continue
        segment.append(raw)
    return found


def _placeholder(word: str) -> bool:
    """An argument the docs leave to the reader: `TEAM`, `...`, `…`, `[ID]`."""
    bare = word.strip("[]")
    return bare in ("", "...", "…") or bool(re.fullmatch(r"[A-Z][A-Z0-9_]*(\.\.\.)?", bare))


def _options(command: Any, prog: str) -> dict[str, Any]:
    """Every option a click command takes (its help option too), by each spelling."""
    params = command.get_params(command.context_class(command, info_name=prog))
    return {opt: p for p in params if p.param_type_name == "option" for opt in p.opts + p.secondary_opts}


def _takes_value(param: Any) -> bool:
    return not (getattr(param, "is_flag", False) or getattr(param, "count", False))


def _walk(command: Any, words: list[tuple[str, bool]], prog: str) -> list[str]:
    options = _options(command, prog)
    if command.context_settings.get("ignore_unknown_options"):  # `resume TEAM -p …`: the rest goes to the lead
        options = {**_options(click_command(_target([])[0]), "agentteams"), **options}
    subcommands: dict[str, Any] = getattr(command, "commands", None) or {}
    i = 0
    while i < len(words):
        word, quoted = words[i]
        bare = word.lstrip("[").rstrip("]")
        if not quoted and bare.startswith("-") and len(bare) > 1 and not _placeholder(bare):
            if bare == "--":
                return []
            name = bare.split("=", 1)[0]
            if name not in options:
                return [f"`{prog}` has no option {name}"]
            if _takes_value(options[name]) and "=" not in bare and not word.endswith("]"):
                i += 1
        elif subcommands and not _placeholder(word):
            if word not in subcommands:
                return [f"`{prog}` has no command {word!r} (it has: {', '.join(sorted(subcommands))})"]
            return _walk(subcommands[word], words[i + 1 :], f"{prog} {word}")
        i += 1
    return []


def command_problems(line: str) -> list[str]:
    """What is wrong with each `agentteams …` command of one shell line: an unknown command or option."""
    problems: list[str] = []
    for given in invocations(line):
        words = _without_global_options(given)
        first, quoted = words[0] if words else ("", False)
        if not quoted and re.fullmatch(r"[a-z][a-z0-9-]*", first) and first not in GROUPS and first not in COMMANDS:
            problems.append(f"{line.strip()}: agentteams has no command {first!r}: the agent would take it as a prompt")
            continue
        app, args, prog = _target([w for w, _ in words])  # as main() picks the command (a lone `-r` gets "")
        was_quoted = {w for w, q in words if q}
        found = _walk(click_command(app), [(a, a in was_quoted) for a in args], prog)
        problems += [f"{line.strip()}: {p}" for p in found]
    return problems


def _without_global_options(words: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """The words after the options given before the command's name (`--store URL`, `--store=URL`)."""
    while words and words[0][0].split("=", 1)[0] in GLOBAL_OPTIONS:
        words = words[1:] if "=" in words[0][0] else words[2:]
    return words


def readme_problems(text: str) -> list[str]:
    """README.md is a page (at most 200 lines) and shows both set-up commands, each as given."""
    problems = []
    if len(text.splitlines()) > README_MAX_LINES:
        problems.append(f"README.md has {len(text.splitlines())} lines; at most {README_MAX_LINES}")
    lines = {line.strip() for block in code_blocks(text) for line in block}
    problems += [f"README.md does not show `{cmd}` in a code block" for cmd in (INSTALL, TESTS) if cmd not in lines]
    return problems


# --- the docs themselves ---------------------------------------------------------------------------------------------


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_there_are_docs_pages() -> None:
    names = {p.name for p in DOCS}
    expected = {"teams.md", "agent.md", "permissions.md", "sessions.md", "stores.md", "commands.md",
                "architecture.md", "testing.md", "benchmarks.md", "troubleshooting.md"}  # fmt: skip
    assert expected <= names, f"missing docs pages: {sorted(expected - names)}"


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_reaches_a_file_and_heading(page: Path) -> None:
    assert broken_links(page.read_text(encoding="utf-8"), page) == []


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_command_line_shown_names_real_commands_and_options(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert [p for line in command_lines(text) for p in command_problems(line)] == []


def test_the_docs_show_command_lines_to_check() -> None:
    shown = [w for page in PAGES for line in command_lines(page.read_text(encoding="utf-8")) for w in invocations(line)]
    assert len(shown) >= 20  # the check above would pass on docs that show none


def test_readme_is_a_page_with_both_set_up_commands() -> None:
    assert readme_problems(README.read_text(encoding="utf-8")) == []


def test_every_docs_page_is_in_the_readme_index() -> None:
    text = README.read_text(encoding="utf-8")
    assert [p.name for p in DOCS if f"](docs/{p.name})" not in text] == []


# --- each check can fail ---------------------------------------------------------------------------------------------


def test_a_broken_link_or_anchor_is_caught(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Page A\n## The `x` option\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text("# Home\n", encoding="utf-8")
    assert broken_links("See [x](docs/no-such-page.md).", page)
    assert broken_links("See [x](docs/a.md#no-such-heading).", page)
    assert broken_links("See [x](#no-such-heading).", page)
    assert broken_links("See [x](docs/a.md#the-x-option), [y](docs/a.md), [z](#home).", page) == []
    assert broken_links("Outside: [x](https://example.com/nowhere), `[x](nowhere.md)`.", page) == []


def test_anchors_follow_githubs_slugs() -> None:
    text = "# A team file: `launch` and `team export`\n## Seeing\n## Seeing\n```\n# not a heading\n```\n"
    assert anchors(text) == {"a-team-file-launch-and-team-export", "seeing", "seeing-1"}


def test_an_unknown_option_or_command_is_caught() -> None:
    assert command_problems("agentteams status --no-such-option")
    assert command_problems("$ agentteams -p hi --no-such-option x")
    assert command_problems("FOO=1 agentteams task frobnicate TEAM")
    assert command_problems("git diff | agentteams frobnicate")  # a word that is no command goes to the model
    assert command_problems("agentteams --store redis://h:6379/0 mirror --tem NAME")
    assert command_problems("agentteams team list --json && agentteams msg send TEAM bob hi --frm x")


def test_real_command_lines_pass() -> None:
    for line in (
        "agentteams status --json",
        "$ agentteams -p 'fix it' --permission-mode acceptEdits --output-format=json  # a comment --nope",
        "AGENTTEAMS_STORE=redis://h:6379/0 agentteams",
        "agentteams --store redis://h:6379/0 watch TEAM",
        "agentteams team export NAME > team.toml",
        "echo hi | agentteams -p -r ID",
        "agentteams diff proj alice [--stat]",
        "agentteams merge proj alice [--into BRANCH] [--squash]",
        "agentteams task update TEAM ID --status completed --owner alice",
        "agentteams 'a prompt in quotes' --model haiku",
        "agentteams -c",
        "agentteams --agent-id … --agent-name … --team-name …",
    ):
        assert command_problems(line) == [], line


def test_a_long_readme_or_a_missing_set_up_command_is_caught() -> None:
    page = f"# x\n\n```sh\n{INSTALL}\n```\n\n```sh\n{TESTS}\n```\n"
    assert readme_problems(page) == []
    assert readme_problems(page + "more\n" * README_MAX_LINES)
    assert readme_problems(page.replace(TESTS, "python -m pytest -q"))
    assert readme_problems(page.replace("```sh\n" + INSTALL + "\n```", INSTALL))  # named, but not as a command
