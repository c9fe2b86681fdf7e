"""Interop tier, `mcp` and the subcommand list: a server added with `agentteams mcp add` is listed (and connected to)
by the real `claude mcp list`, and the other way round; the same `mcp add` commands write the same entries into the
same files; every subcommand of each pinned `claude --help` is one ours knows (a new release's shows up here)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentteams.cli import COMMANDS, GROUPS
from tests.support import ccversions as ccv
from tests.support import realclaude as rc
from tests.support.cli import Cli
from tests.support.mcp_lab import SERVER

pytestmark = pytest.mark.timeout(240)
OFFLINE = "http://127.0.0.1:9"  # nothing here may reach a model: a closed port


def _env(config: Path) -> dict[str, str]:
    return rc.claude_env(config, OFFLINE, extra={"PYTHONIOENCODING": "utf-8"})


def _claude(claude: Path, config: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(claude), *args], env=_env(config), cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False, stdin=subprocess.DEVNULL)  # fmt: skip


def _status(listing: str, name: str) -> str:
    line = next((ln for ln in listing.splitlines() if ln.startswith(f"{name}: ")), "")
    return line.rsplit(" - ", 1)[-1]


@pytest.mark.parametrize("claude_version", rc.PINNED)
def test_each_cli_lists_and_connects_to_the_others_servers(
    claude: Path, claude_version: str, cli: Cli, tmp_path: Path
) -> None:
    config, work = tmp_path / "cc", tmp_path / "work"
    work.mkdir()
    ours = cli.with_env(_env(config))
    serve = ["--", sys.executable, str(SERVER)]
    assert ours("mcp", "add", "ours-local", *serve, cwd=work).returncode == 0
    assert ours("mcp", "add", "-s", "user", "ours-user", *serve, cwd=work).returncode == 0
    theirs = _claude(claude, config, work, "mcp", "list")
    assert theirs.returncode == 0, theirs.stderr
    assert _status(theirs.stdout, "ours-local") == "\u2714 Connected", theirs.stdout
    assert _status(theirs.stdout, "ours-user") == "\u2714 Connected", theirs.stdout
    for args in (["theirs", *serve], ["-s", "project", "theirs-proj", *serve]):
        added = _claude(claude, config, work, "mcp", "add", *args)
        assert added.returncode == 0, added.stderr
    listed = ours("mcp", "list", cwd=work)
    assert listed.returncode == 0, listed.stderr
    assert _status(listed.stdout, "theirs") == "\u2714 Connected", listed.stdout
    assert _status(listed.stdout, "theirs-proj").startswith("\u23f8 Pending approval"), listed.stdout
    assert _status(listed.stdout, "ours-local") == "\u2714 Connected", listed.stdout
    removed = _claude(claude, config, work, "mcp", "remove", "ours-local")
    assert removed.returncode == 0, removed.stderr
    assert "ours-local" not in ours("mcp", "list", cwd=work).stdout


ADDS = [
    ["local-stdio", "-e", "K=V", "--", "node", "server.js", "--flag"],
    ["-s", "user", "-t", "http", "user-http", "https://example.com/mcp", "-H", "Authorization: Bearer x"],
    ["-s", "project", "-t", "sse", "proj-sse", "https://example.com/sse"],
    ["-t", "http", "--client-id", "cid", "--callback-port", "8123", "oauth-http", "https://example.com/o"],
]


def _written(config: Path, work: Path) -> dict[str, Any]:
    state = json.loads((config / ".claude.json").read_text())
    entry = state["projects"][str(work)]
    return {"user": state.get("mcpServers"), "local": entry["mcpServers"], "local keys": sorted(entry),
            "project": json.loads((work / ".mcp.json").read_text())}  # fmt: skip


@pytest.mark.parametrize("claude_version", [rc.NEWEST])
def test_the_same_adds_write_the_same_files(claude: Path, claude_version: str, cli: Cli, tmp_path: Path) -> None:
    got: dict[str, Any] = {}
    for who in ("claude", "ours"):
        config, work = tmp_path / who / "cc", tmp_path / who / "work"
        work.mkdir(parents=True)
        said = []
        for args in [*ADDS, ADDS[0]]:  # the last one again: a name taken
            if who == "claude":
                proc = _claude(claude, config, work, "mcp", "add", *args)
            else:
                proc = cli.with_env(_env(config))("mcp", "add", *args, cwd=work)
            said.append((proc.returncode, proc.stdout.replace(str(tmp_path / who), "T"), proc.stderr.strip()))
        json_add = ["mcp", "add-json", "j", '{"type": "ws", "url": "wss://x", "extra": 1}']
        proc = _claude(claude, config, work, *json_add) if who == "claude" else \
            cli.with_env(_env(config))(*json_add, cwd=work)  # fmt: skip
        said.append((proc.returncode, proc.stdout, proc.stderr.strip()))
        got[who] = (_written(config, work), said)
    assert got["ours"][0] == got["claude"][0]
    assert got["ours"][1] == got["claude"][1]  # the same lines and exit codes


def _commands(help_text: str) -> list[str]:
    """The command words of `claude --help`'s Commands section (each alias of `stop|kill`)."""
    section = help_text.split("\nCommands:\n", 1)[1]
    return [w for m in re.finditer(r"^  (\S+)", section, re.M) for w in m.group(1).split("|")]


@pytest.mark.parametrize("claude_version", rc.PINNED)
def test_every_subcommand_of_claude_help_is_one_of_ours(claude: Path, claude_version: str, tmp_path: Path) -> None:
    proc = _claude(claude, tmp_path / "cc", tmp_path, "--help")
    assert proc.returncode == 0, proc.stderr
    words = _commands(proc.stdout)
    assert {"mcp", "auth", "doctor", "update"} <= set(words), words  # the parse found the section
    unknown = [w for w in words if w not in COMMANDS and w not in GROUPS]
    assert unknown == [], f"claude {claude_version} has subcommands agentteams does not know: {unknown}"


@ccv.only(rc.NEWEST)
def test_servers_that_fail_are_listed_in_claudes_words(claude: Path, claude_version: str, cli: Cli,
                                                       tmp_path: Path) -> None:  # fmt: skip
    config, work = tmp_path / "cc", tmp_path / "work"
    work.mkdir()
    unrunnable = tmp_path / "server.sh"
    unrunnable.write_text("#!/bin/sh\n")
    unrunnable.chmod(0o644)
    env = {**_env(config), "MCP_TIMEOUT": "2000"}
    ours = cli.with_env(env)
    adds = (["missing", "--", str(tmp_path / "no-such-server")], ["unrunnable", "--", str(unrunnable)],
            ["exits", "--", "sh", "-c", "exit 3"], ["silent", "--", "sleep", "60"],
            ["-t", "http", "refused", f"{OFFLINE}/mcp"], ["-t", "sse", "refused-sse", f"{OFFLINE}/sse"])  # fmt: skip
    for args in adds:
        assert ours("mcp", "add", *args, cwd=work).returncode == 0
    theirs = subprocess.run([str(claude), "mcp", "list"], env=env, cwd=work, capture_output=True, text=True,
                            timeout=120, check=False, stdin=subprocess.DEVNULL)  # fmt: skip
    listed = ours("mcp", "list", cwd=work)
    assert theirs.returncode == listed.returncode == 0, (theirs.stderr, listed.stderr)
    rows = {which: sorted(ln for ln in out.splitlines() if ": " in ln) for which, out in
            (("claude", theirs.stdout), ("ours", listed.stdout))}  # fmt: skip
    assert rows["ours"] == rows["claude"] and len(rows["ours"]) == 6, rows
