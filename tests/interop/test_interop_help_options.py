"""Interop tier: every option `claude --help` lists, in each pinned version, is an option of ours: the next release's
new flag fails here (run the real CLI, read its Options), before a user meets `No such option`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from agentteams.cli.root_options import TYPER_OWN, WORDS
from tests.support import ccversions as ccv
from tests.support import realclaude as rc

pytestmark = pytest.mark.timeout(120)

HELP_WORDS = {"-h", "--help"}  # commander's own help, as typer's --help
_OPTION = re.compile(r"^ {2}(-\S.*?)(?: {2,}|$)")  # an option's line: two blanks, its names and value, two blanks


def help_options(text: str) -> set[str]:
    """Every option word of the Options section of `claude --help` (`-c`, `--continue`, `--allowedTools`, ...)."""
    section = text.split("\nOptions:", 1)[1].split("\nCommands:", 1)[0]
    words: set[str] = set()
    for line in section.splitlines():
        found = _OPTION.match(line)
        if found:
            names = re.split(r" [<\[]", found.group(1))[0]  # the names before the value: `-r, --resume [value]`
            words |= {w.strip() for w in names.split(",") if w.strip().startswith("-")}
    return words


def test_the_help_text_is_read_as_it_is_laid_out() -> None:
    text = ("Usage: claude\n\nOptions:\n  -r, --resume [value]   Resume\n  --allowedTools, --allowed-tools <tools...>\n"
            "      Comma list\n  --bg, --background     Start\n\nCommands:\n  mcp   Configure\n")  # fmt: skip
    assert help_options(text) == {"-r", "--resume", "--allowedTools", "--allowed-tools", "--bg", "--background"}


@ccv.only(*rc.PINNED)
def test_every_option_of_claudes_help_is_ours(claude: Path, claude_version: str, tmp_path: Path) -> None:
    env = rc.claude_env(tmp_path / "config", "http://127.0.0.1:9")
    proc = subprocess.run([str(claude), "--help"], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    theirs = help_options(proc.stdout)
    assert len(theirs) > 40, proc.stdout  # the section was found and read
    ours = set(WORDS) | set(TYPER_OWN) | HELP_WORDS
    assert sorted(theirs - ours) == [], f"claude {claude_version} options agentteams does not know"
