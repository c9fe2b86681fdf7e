"""Output styles on a real `agentteams -p` against the scripted server, as Claude Code 2.1.332 applies them (seen
against the same server; tests/interop/test_interop_output_styles.py compares with it live): a project's style, a
user's, a built-in; the first line, the section holding the file's text as given, the closing line last; and the
styles' loading rules (settings/output_styles.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentteams.agent.prompts import INTRO, STYLED_INTRO
from agentteams.mockapi import MockServer
from agentteams.settings.output_styles import BUILTINS, chosen, load_styles, named
from tests.support.cli import Cli
from tests.support.headless import agentteams, script, serve

BODY = "Speak like a pirate.\n\n  Keep the code itself plain.  "  # given as written (its ends trimmed, as claude)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def system_sent(cli: Cli, work: Path, servers: list[MockServer], *args: str) -> str:
    server = serve(servers, script("ok"))
    proc = agentteams(cli, work, "-p", "hi", *args, base_url=server.base_url)
    assert proc.returncode == 0, proc.stderr
    [request] = [r for r in server.requests if r["path"].startswith("/v1/messages") and r["body"].get("tools")]
    return "".join(block["text"] for block in request["body"]["system"])


def test_a_project_style_goes_into_the_request_after_everything_else(
    cli: Cli, work: Path, config_root: Path, servers: list[MockServer]
) -> None:
    write(work / ".claude" / "output-styles" / "p.md", f"---\nname: Pirate\ndescription: arr\n---\n\n{BODY}\n")
    write(work / ".claude" / "settings.json", json.dumps({"outputStyle": "Pirate"}))
    system = system_sent(cli, work, servers, "--append-system-prompt", "APPENDED")
    assert system.startswith(STYLED_INTRO) and INTRO not in system
    section = f"# Output Style: Pirate\n{BODY.strip()}"
    assert system.count(section) == 1
    # after the environment and the appended text, and the closing line last, as 2.1.332 orders them
    assert system.index(str(work)) < system.index("APPENDED") < system.index(section)
    assert system.endswith(f"{section}\n\nPirate output style is active: answer in the way its section above "
                           "describes.")  # fmt: skip


def test_a_users_style_and_a_built_in_and_none(
    cli: Cli, work: Path, config_root: Path, servers: list[MockServer]
) -> None:
    write(config_root / "output-styles" / "terse.md", "USER-STYLE-TEXT\n")  # no front matter: named after the file
    write(config_root / "settings.json", json.dumps({"outputStyle": "terse"}))
    closing = "terse output style is active: answer in the way its section above describes."
    assert system_sent(cli, work, servers).endswith(f"# Output Style: terse\nUSER-STYLE-TEXT\n\n{closing}")
    explanatory = next(s for s in BUILTINS if s.name == "Explanatory")
    system = system_sent(cli, work, servers, "--settings", json.dumps({"outputStyle": "Explanatory"}))
    assert f"# Output Style: Explanatory\n{explanatory.prompt}\n\n" in system and system.startswith(STYLED_INTRO)
    # the exact name only (2.1.332 applies no style for `explanatory`), and `default` is none
    for name in ("explanatory", "default", "Nope"):
        system = system_sent(cli, work, servers, "--settings", json.dumps({"outputStyle": name}))
        assert system.startswith(INTRO) and "# Output Style" not in system, name


def test_a_system_prompt_given_keeps_the_style(cli: Cli, work: Path, servers: list[MockServer]) -> None:
    system = system_sent(cli, work, servers, "--system-prompt", "MINE", "--settings", '{"outputStyle": "Concise"}')
    assert system.startswith("MINE\n\n# Output Style: Concise\n")


def test_styles_are_found_as_claude_finds_them(tmp_path: Path) -> None:
    cwd, root = tmp_path / "proj", tmp_path / "root"
    write(root / "output-styles" / "a.md", "---\nname: Shared\ndescription: the user's\n---\nUSER\n")
    write(root / "output-styles" / "b.md", "---\nname: Mine\n---\nMINE\n")
    write(cwd / ".claude" / "output-styles" / "c.md", "---\nname: Shared\ndescription: the project's\n---\nPROJECT\n")
    write(cwd / ".claude" / "output-styles" / "bad.md", "---\nname: Broken\n")  # unclosed front matter: left out
    styles = load_styles(cwd, root)
    assert list(styles)[:4] == ["Proactive", "Concise", "Explanatory", "Learning"]
    assert styles["Shared"].prompt == "PROJECT" and styles["Shared"].origin == "project"  # the project's wins
    assert styles["Mine"].prompt == "MINE" and "Broken" not in styles
    assert chosen({"outputStyle": "Mine"}, cwd, root) == styles["Mine"]
    assert chosen({"outputStyle": "mine"}, cwd, root) is None and chosen({}, cwd, root) is None
    assert named("mine", styles) == styles["Mine"]  # /output-style takes any case


@pytest.mark.parametrize("style", BUILTINS, ids=lambda s: s.name)
def test_every_built_in_has_a_description_a_text_and_a_closing_line(style: object) -> None:
    from agentteams.settings.output_styles import OutputStyle

    assert isinstance(style, OutputStyle)
    assert style.description and style.prompt and style.closing_line().startswith(f"{style.name} output style is")
