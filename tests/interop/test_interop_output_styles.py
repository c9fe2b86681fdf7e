"""Interop tier, output styles: with `outputStyle` set (a project's file, a built-in), the real Claude Code CLI and ours
change the prompt alike: one first paragraph replaced, a `# Output Style: NAME` section (a file's text as given) after
the working directory and the appended prompt, and the style's closing line after it, in the request's text order."""

from __future__ import annotations

import difflib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.headless import KEY

pytestmark = pytest.mark.timeout(120)

STYLE_FILE = "---\nname: Pirate\ndescription: arr\n---\n\nPIRATE-STYLE first line.\n\nPIRATE-STYLE second part.\n"
APPENDED = "APPENDED-PROMPT-TEXT"


def request_text(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    """The main request's text in the order it is sent: the system blocks, then each message's text blocks."""
    with MockServer({"routes": [], "fallback": "OK."}) as server:
        proc = subprocess.run(argv, env={**env, "ANTHROPIC_BASE_URL": server.base_url}, cwd=cwd, capture_output=True,
                              text=True, timeout=90, check=False)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        [body] = [r["body"] for r in server.requests if r["path"].startswith("/v1/messages") and r["body"].get("tools")]
    system = body["system"]
    parts = [system] if isinstance(system, str) else [b["text"] for b in system]
    for message in body["messages"]:
        content = message["content"]
        blocks: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts += [b["text"] for b in blocks if b.get("type") == "text"]
    return "\n\n".join(parts)


def placement(styled: str, plain: str, name: str, text: str | None, cwd: Path) -> dict[str, Any]:
    """Where the style went, as facts both CLIs must share."""
    heading = f"# Output Style: {name}\n"
    at = styled.index(heading)
    closing = styled.index(f"{name} output style is active")
    changed = [op for op in difflib.SequenceMatcher(None, plain.split("\n\n"), styled.split("\n\n")).get_opcodes()
               if op[0] != "equal"]  # fmt: skip
    replaced = [op for op in changed if op[0] == "replace"]
    return {
        "one section": styled.count(heading) == 1,
        "the text as given": text is None or styled[at + len(heading) :].startswith(text),
        "after the directory": styled.index(str(cwd)) < at,
        "after the appended prompt": styled.index(APPENDED) < at,
        "closing after it": at < closing,
        "one paragraph replaced, before it": len(replaced) == 1 and replaced[0][2] - replaced[0][1] == 1
        and styled.index("\n\n".join(styled.split("\n\n")[replaced[0][3] : replaced[0][4]])) < at,
        "no style without it": "# Output Style" not in plain and "output style is active" not in plain,
    }  # fmt: skip


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize(("name", "text"), [("Pirate", "PIRATE-STYLE first line.\n\nPIRATE-STYLE second part.\n"),
                                            ("Explanatory", None)])  # fmt: skip
def test_the_style_goes_where_the_real_cli_puts_it(
    claude: Path, cli: Cli, tmp_path: Path, name: str, text: str | None
) -> None:
    cwd = tmp_path / "proj"
    (cwd / ".claude" / "output-styles").mkdir(parents=True)
    (cwd / ".claude" / "output-styles" / "pirate.md").write_text(STYLE_FILE, encoding="utf-8")
    config = tmp_path / "real-config"
    rc.seed_home(config, [cwd], rc.NEWEST)
    ours_env = {**cli.env(), "ANTHROPIC_API_KEY": KEY}
    views = []
    for argv, env in (([str(claude)], rc.claude_env(config, "")), (cli.argv(), ours_env)):
        args = [*argv, "-p", "hi", "--append-system-prompt", APPENDED]
        plain = request_text(args, env, cwd)
        styled = request_text([*args, "--settings", json.dumps({"outputStyle": name})], env, cwd)
        views.append(placement(styled, plain, name, text, cwd))
    assert views[0] == views[1]
    assert all(views[0].values()), views[0]
