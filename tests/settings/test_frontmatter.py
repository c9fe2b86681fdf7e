"""Front matter of custom agents and commands: plain `key: value` read without PyYAML, richer YAML through
it, and a broken block is one line naming the file and the line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentteams.settings.frontmatter import FrontMatterError, parse_markdown, read_markdown

P = Path("/x/agent.md")


def test_plain_front_matter_and_body() -> None:
    doc = parse_markdown(
        "---\nname: reviewer\ndescription: Reviews code: carefully\ntools: Read, Grep\n---\n\nBody\n", P
    )
    assert doc.meta == {"name": "reviewer", "description": "Reviews code: carefully", "tools": "Read, Grep"}
    assert doc.body == "Body\n"
    assert doc.text("tools") == "Read, Grep"


def test_scalars_quotes_and_comments() -> None:
    doc = parse_markdown("---\n# a comment\nmodel: 'opus'\nx: true\nn: 3\nempty:\n---\nB", P)
    assert doc.meta == {"model": "opus", "x": True, "n": 3, "empty": None}
    assert doc.text("x") == "true"
    assert doc.text("empty") is None


def test_no_front_matter_is_all_body() -> None:
    assert parse_markdown("Just text\n---\n", P).meta == {}
    assert parse_markdown("Just text\n---\n", P).body == "Just text\n---\n"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("tools:\n  - Read\n  - 'Bash'\n", {"tools": ["Read", "Bash"]}),
        ("tools: [Read, 'Bash']\n", {"tools": ["Read", "Bash"]}),
        ("description: |\n  two\n  lines\n", {"description": "two\nlines\n"}),
        ('description: "quoted \\"inner\\""\n', {"description": 'quoted "inner"'}),
        ("model: opus # the big one\n", {"model": "opus"}),
    ],
)
def test_richer_yaml_goes_to_pyyaml(block: str, expected: dict[str, object]) -> None:
    assert parse_markdown(f"---\n{block}---\nbody", P).meta == expected


def test_unclosed_and_invalid_blocks_name_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(FrontMatterError, match=r"agent\.md:1: .*never closed"):
        parse_markdown("---\nname: x\n", P)
    bad = tmp_path / "bad.md"
    bad.write_text("---\nname: x\ntools: [Read\n---\nbody\n", encoding="utf-8")
    with pytest.raises(FrontMatterError, match=r"bad\.md:\d+: the front matter is not valid YAML"):
        read_markdown(bad)
    with pytest.raises(FrontMatterError, match="must be `key: value` lines"):
        parse_markdown("---\n- a\n- b\n---\n", P)


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("tools:\n  - Read\n  - Bash(git:*)\nmodel: opus\n", {"tools": ["Read", "Bash(git:*)"], "model": "opus"}),
        ("tools: [Read, Grep, mcp__db__query]\n", {"tools": ["Read", "Grep", "mcp__db__query"]}),
        ("tools: []\nempty:\n", {"tools": [], "empty": None}),
    ],
)
def test_simple_lists_are_read_as_pyyaml_reads_them(block: str, expected: dict[str, object]) -> None:
    import yaml

    text = f"---\n{block}---\nbody"
    assert parse_markdown(text, P).meta == expected == yaml.safe_load(block)


def test_plain_front_matter_does_not_import_yaml() -> None:
    code = (
        "import sys; from pathlib import Path; from agentteams.settings.frontmatter import parse_markdown;"
        "parse_markdown('---\\nname: a\\ntools: Read, Bash\\n---\\nb', Path('x'));"
        "parse_markdown('---\\ntools: [Read, Bash]\\nx:\\n  - Grep\\n  - Glob\\n---\\nb', Path('x'));"
        "print('yaml' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
