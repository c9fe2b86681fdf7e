"""Interop tier, `--bare` and `--safe-mode` against claude 2.1.332 (issue 29's leftovers), each CLI `-p` in the same
project (CLAUDE.md, CLAUDE.local.md, a rule, the user's CLAUDE.md, a command, an agent, skills, an output style,
hooks, an MCP server in .mcp.json): without the flags the files reach the request; with either, none does; `--bare`
offers Bash, Read and Edit only, `--safe-mode` every built-in tool, and an MCP server of --mcp-config still starts
under `--bare`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli

pytestmark = pytest.mark.timeout(240)
ROOT = Path(__file__).resolve().parents[2]
OK = [{"content": [{"type": "text", "text": "ok"}], "repeat": 20}]
SCRIPT = {"routes": [{"name": "main", "match": {"tools": True}, "turns": OK}, {"name": "side", "turns": OK}]}
MARKS = ("PROJ-MEMO", "LOCAL-MEMO", "RULE-MEMO", "USER-MEMO", "mycmd", "myskill", "MYSTYLE-TEXT", "HOOK-CONTEXT",
         "START-CONTEXT", "filesrv")  # fmt: skip


def _server(name: str) -> dict[str, Any]:
    return {"mcpServers": {name: {"command": sys.executable, "args": [str(ROOT / "tests/support/mcp_server.py")]}}}


def _seed(cwd: Path, config: Path) -> None:
    (cwd / "CLAUDE.md").write_text("PROJ-MEMO\n")
    (cwd / "CLAUDE.local.md").write_text("LOCAL-MEMO\n")
    (config / "CLAUDE.md").write_text("USER-MEMO\n")
    dot = cwd / ".claude"
    for folder in ("rules", "commands", "skills/myskill", "output-styles"):
        (dot / folder).mkdir(parents=True)
    (dot / "rules" / "r.md").write_text("RULE-MEMO\n")
    (dot / "commands" / "mycmd.md").write_text("---\ndescription: a command\n---\nDo it\n")
    (dot / "skills" / "myskill" / "SKILL.md").write_text("---\nname: myskill\ndescription: a skill\n---\nBody\n")
    (dot / "output-styles" / "mystyle.md").write_text("---\nname: mystyle\ndescription: d\n---\nMYSTYLE-TEXT\n")
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo HOOK-CONTEXT"}]}],
             "SessionStart": [{"hooks": [{"type": "command", "command": "echo START-CONTEXT"}]}]}  # fmt: skip
    settings = {"outputStyle": "mystyle", "hooks": hooks, "enableAllProjectMcpServers": True}
    (dot / "settings.json").write_text(json.dumps(settings))
    (cwd / ".mcp.json").write_text(json.dumps(_server("filesrv")))


def _seen(server: MockServer) -> tuple[list[str], list[str], bool]:
    """What the first main request carried: the markers found in it, its tools, whether --mcp-config's server's
    name is in it."""
    body = next(r["body"] for r in server.requests if isinstance(r["body"], dict) and r["body"].get("tools"))
    sent = json.dumps(body)
    names = [str(t.get("name")) for t in body["tools"]]  # MCP's own and claude's MCP resource tools left out
    tools = sorted(n for n in names if not n.startswith("mcp__") and "Mcp" not in n)
    return [m for m in MARKS if m in sent], tools, "flagsrv" in sent


@ccv.only(rc.NEWEST)
@pytest.mark.parametrize("flags", [(), ("--bare",), ("--safe-mode",)], ids=["plain", "bare", "safe"])
def test_bare_and_safe_mode_leave_out_what_claude_leaves_out(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    cwd, config = tmp_path / "proj", tmp_path / "config"
    cwd.mkdir()
    rc.seed_home(config, [cwd], claude_version)
    _seed(cwd, config)
    explicit = tmp_path / "flag-mcp.json"
    explicit.write_text(json.dumps(_server("flagsrv")))
    found = {}
    for which, argv in (("claude", [str(claude)]), ("ours", cli.argv())):
        with MockServer(SCRIPT) as server:
            env = rc.claude_env(config, server.base_url)
            proc = subprocess.run([*argv, "-p", "PROBE", "--mcp-config", str(explicit), *flags], cwd=cwd, env=env,
                                  capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
            assert proc.returncode == 0, (which, proc.stderr[-2000:])
            found[which] = _seen(server)
    theirs, ours = found["claude"], found["ours"]
    if flags:  # nothing of the files reached either model
        assert ours[0] == theirs[0] == [], found
    else:  # all of it reached claude's; ours reads no .claude/rules, lists no commands nor skills yet
        assert theirs[0] == list(MARKS) and set(ours[0]) == set(MARKS) - {"RULE-MEMO", "mycmd", "myskill"}, found
    if flags == ("--bare",):
        assert ours[1] == theirs[1] == ["Bash", "Edit", "Read"]
    assert ours[2] == theirs[2]  # --mcp-config's server: there, under --bare too
